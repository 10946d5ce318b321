package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.FakeUpstream;
import io.engram.support.Http;
import io.engram.support.OtlpReceiver;
import io.engram.support.OtlpReceiver.Received;
import io.engram.support.PricedOrganization;
import io.engram.support.TestServer;
import io.engram.support.WebSocketClient;
import io.opentelemetry.proto.trace.v1.Span.SpanKind;
import io.opentelemetry.proto.trace.v1.Status.StatusCode;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Traces over OTLP/HTTP, received by a collector of the test that decodes the real protobuf: a
 * chat is one trace under the client's traceparent, with a span for each step (access, limits,
 * memory, each provider attempt, the response) and the GenAI attributes; the provider gets the
 * trace context of its call; contents only where the organization opts in; a collector that hangs
 * costs requests nothing (spans are dropped and counted); off, a client's traceparent is still
 * handed on.
 */
class TracingTest {
  private static OtlpReceiver collector;
  private static FakeUpstream upstream;
  private static TestServer server;

  @BeforeAll
  static void start() {
    collector = new OtlpReceiver();
    upstream = new FakeUpstream();
    server = TestServer.builder()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint())
        .env("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip")
        .env("OTEL_BSP_SCHEDULE_DELAY", "50")
        .env("OTEL_SERVICE_NAME", "engram-under-test")
        .start();
  }

  @AfterAll
  static void stop() {
    server.close();
    upstream.close();
    collector.close();
  }

  private static String hex(int bytes) {
    byte[] random = new byte[bytes];
    ThreadLocalRandom.current().nextBytes(random);
    return HexFormat.of().formatHex(random);
  }

  private static Http.Response chat(String credential, String traceParent, String question) {
    Http.Call call = server
        .http
        .post("/v1/chat/completions")
        .bearer(credential)
        .json("{\"model\":\"priced\",\"max_tokens\":5,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"" + question + "\"}]}");
    return (traceParent == null ? call : call.header("traceparent", traceParent)).send();
  }

  private static Received named(List<Received> spans, String name) {
    return spans.stream()
        .filter(span -> span.name().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError(
            "no span " + name + " in " + spans.stream().map(Received::name).toList()));
  }

  @Test
  void aChatIsOneTraceUnderTheClientsWithASpanForEachStepAndTheProviderCall() {
    PricedOrganization org = PricedOrganization.create(server, "growth", upstream);
    String token = server.tokenWithEveryScope(org.id());
    String memoryId = org.remember(token, "The staff canteen opens at half past eleven.");
    String traceId = hex(16);
    String clientSpan = hex(8);

    Http.Response answer = chat(
        token, "00-" + traceId + "-" + clientSpan + "-01", "When does the staff canteen open?");
    assertThat(answer.status()).as(answer.text()).isEqualTo(200);
    assertThat(answer.header("X-Engram-Memory-Ids")).contains(memoryId);

    List<Received> trace = collector.trace(traceId, "POST /v1/chat/completions");
    Received request = named(trace, "POST /v1/chat/completions");
    assertThat(request.span().getKind()).isEqualTo(SpanKind.SPAN_KIND_SERVER);
    assertThat(request.parentId()).isEqualTo(clientSpan);
    assertThat(request.resource()).containsEntry("service.name", "engram-under-test");
    assertThat(request.attributeOrEmpty("http.response.status_code")).isEqualTo("200");
    assertThat(request.attributeOrEmpty("http.route")).isEqualTo("/v1/chat/completions");
    assertThat(request.attributeOrEmpty("engram.request.id"))
        .isEqualTo(answer.header("X-Request-Id"));
    assertThat(request.attributeOrEmpty("engram.organization.id")).isEqualTo(org.id());
    assertThat(request.attributeOrEmpty("gen_ai.operation.name")).isEqualTo("chat");
    assertThat(request.attributeOrEmpty("gen_ai.request.model")).isEqualTo("priced");
    assertThat(request.attributeOrEmpty("gen_ai.request.max_tokens")).isEqualTo("5");
    assertThat(request.attributeOrEmpty("gen_ai.usage.output_tokens")).isEqualTo("5");
    assertThat(request.attributeOrEmpty("gen_ai.response.finish_reasons")).isEqualTo("stop");
    assertThat(request.attributeOrEmpty("engram.memory.ids")).contains(memoryId);
    assertThat(request.attributeOrEmpty("engram.cost_usd"))
        .isEqualTo(String.valueOf(PricedOrganization.REQUEST));
    assertThat(request.attributeOrEmpty("engram.deployment"))
        .isEqualTo(answer.header("X-Engram-Deployment"));
    // Contents stay home unless the organization lets them out.
    assertThat(request.attribute("gen_ai.input.messages")).isEmpty();
    assertThat(request.attribute("gen_ai.output.messages")).isEmpty();

    for (String step : List.of("access", "limits", "memory", "chat upstream-model", "response")) {
      assertThat(named(trace, step).parentId()).as(step).isEqualTo(request.spanId());
    }
    Received memory = named(trace, "memory");
    assertThat(Long.parseLong(memory.attributeOrEmpty("engram.memory.candidates")))
        .isGreaterThanOrEqualTo(1);
    assertThat(memory.attributeOrEmpty("engram.memory.injected")).isEqualTo("1");
    assertThat(memory.attributeOrEmpty("engram.memory.ids")).isEqualTo(memoryId);

    Received call = named(trace, "chat upstream-model");
    assertThat(call.span().getKind()).isEqualTo(SpanKind.SPAN_KIND_CLIENT);
    assertThat(call.attributeOrEmpty("gen_ai.provider.name")).isEqualTo("openai");
    assertThat(call.attributeOrEmpty("gen_ai.request.model")).isEqualTo("upstream-model");
    assertThat(call.attributeOrEmpty("server.address")).isEqualTo("127.0.0.1");
    assertThat(call.attributeOrEmpty("engram.attempt")).isEqualTo("1");
    assertThat(call.attributeOrEmpty("gen_ai.usage.output_tokens")).isEqualTo("5");
    // The provider was called inside the trace, as the child of its call's span.
    assertThat(upstream.traceParents().getLast())
        .isEqualTo("00-" + traceId + "-" + call.spanId() + "-01");
  }

  @Test
  void messagesAndAnswersAreExportedOnlyWhereTheOrganizationOptsIn() {
    PricedOrganization org = PricedOrganization.create(server, "growth", upstream);
    org.configure("{\"traces\":{\"contents\":true}}");
    String traceId = hex(16);
    Http.Response answer =
        chat(org.key(), "00-" + traceId + "-" + hex(8) + "-01", "Is the east door open?");
    assertThat(answer.status()).isEqualTo(200);
    Received request =
        named(collector.trace(traceId, "POST /v1/chat/completions"), "POST /v1/chat/completions");
    assertThat(request.attributeOrEmpty("gen_ai.input.messages"))
        .contains("Is the east door open?");
    assertThat(request.attributeOrEmpty("gen_ai.output.messages"))
        .isEqualTo("Hello from the upstream.");
  }

  @Test
  void eachProviderAttemptIsItsOwnSpanAndAFailedOneSaysWhy() {
    try (FakeUpstream failing = new FakeUpstream()) {
      failing.script(FakeUpstream.Script.error(503, "{\"error\":{\"message\":\"down\"}}", null));
      PricedOrganization org = PricedOrganization.create(server, "growth", upstream);
      String broken = org.post("/providers", """
          {"name":"broken","kind":"openai","base_url":"%s","api_key":"k"}""".formatted(failing.baseUrl()))
          .json()
          .path("id")
          .asText();
      String working = org.post("/providers", """
          {"name":"working","kind":"openai","base_url":"%s","api_key":"k"}""".formatted(upstream.baseUrl()))
          .json()
          .path("id")
          .asText();
      Http.Response model = org.post("/models", """
          {"id":"fallback","retries":0,"deployments":[
            {"provider_id":"%s","model":"first","priority":0},
            {"provider_id":"%s","model":"second","priority":1}]}""".formatted(broken, working));
      assertThat(model.status()).as(model.text()).isEqualTo(201);
      String traceId = hex(16);
      Http.Response answer = server
          .http
          .post("/v1/chat/completions")
          .bearer(org.key())
          .header("traceparent", "00-" + traceId + "-" + hex(8) + "-01")
          .json("{\"model\":\"fallback\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")
          .send();
      assertThat(answer.status()).as(answer.text()).isEqualTo(200);
      assertThat(answer.header("X-Engram-Attempts")).isEqualTo("2");

      List<Received> trace = collector.trace(traceId, "POST /v1/chat/completions");
      Received first = named(trace, "chat first");
      assertThat(first.attributeOrEmpty("engram.attempt")).isEqualTo("1");
      assertThat(first.span().getStatus().getCode()).isEqualTo(StatusCode.STATUS_CODE_ERROR);
      assertThat(first.attributeOrEmpty("error.type")).isNotEmpty();
      Received second = named(trace, "chat second");
      assertThat(second.attributeOrEmpty("engram.attempt")).isEqualTo("2");
      assertThat(second.span().getStatus().getCode()).isNotEqualTo(StatusCode.STATUS_CODE_ERROR);
      assertThat(named(trace, "POST /v1/chat/completions").attributeOrEmpty("engram.attempts"))
          .isEqualTo("2");
      assertThat(failing.traceParents().getLast()).contains(first.spanId());
    }
  }

  @Test
  void aRefusalIsTheLimitsSpansError() {
    PricedOrganization org = PricedOrganization.create(server, "growth", upstream);
    org.budget("{\"scope\":\"organization\",\"period\":\"day\",\"limit\":0.001}");
    String traceId = hex(16);
    Http.Response refused = chat(org.key(), "00-" + traceId + "-" + hex(8) + "-01", "hello");
    assertThat(refused.status()).isEqualTo(429);
    List<Received> trace = collector.trace(traceId, "POST /v1/chat/completions");
    Received limits = named(trace, "limits");
    assertThat(limits.attributeOrEmpty("error.type")).isEqualTo("budget_exceeded");
    assertThat(
            named(trace, "POST /v1/chat/completions").attributeOrEmpty("http.response.status_code"))
        .isEqualTo("429");
    assertThat(trace).noneMatch(span -> span.name().startsWith("chat "));
  }

  @Test
  void aChatOverAWebSocketIsARequestOfItsOwn() throws Exception {
    PricedOrganization org = PricedOrganization.create(server, "growth", upstream);
    try (WebSocketClient client = new WebSocketClient(server.engram.port(), "/v1/ws", null)) {
      client.send("{\"type\":\"auth\",\"api_key\":\"" + org.key() + "\"}");
      assertThat(client.next().get("type").asText()).isEqualTo("auth_ok");
      client.send("{\"type\":\"inference\",\"model\":\"priced\",\"stream\":false,"
          + "\"messages\":[{\"role\":\"user\",\"content\":\"over the socket\"}]}");
      client.until(frame -> frame.path("type").asText().equals("done"));
    }
    Received socket = collector.await(span -> span.name().equals("WebSocket /v1/ws")
        && span.attributeOrEmpty("engram.organization.id").equals(org.id()));
    assertThat(socket.attributeOrEmpty("gen_ai.request.model")).isEqualTo("priced");
    Received call = collector.await(span ->
        span.traceId().equals(socket.traceId()) && span.name().equals("chat upstream-model"));
    assertThat(call.parentId()).isEqualTo(socket.spanId());
  }

  @Test
  void aCollectorThatHangsCostsRequestsNothingAndTheDroppedSpansAreCounted() {
    try (OtlpReceiver hanging = new OtlpReceiver();
        TestServer node = TestServer.builder()
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", hanging.endpoint())
            .env("OTEL_BSP_SCHEDULE_DELAY", "10")
            .env("OTEL_BSP_MAX_QUEUE_SIZE", "8")
            .env("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "4")
            .env("OTEL_EXPORTER_OTLP_TIMEOUT", "1000")
            .env("OTEL_BSP_EXPORT_TIMEOUT", "2000")
            .start()) {
      hanging.hang();
      PricedOrganization org = PricedOrganization.create(node, "growth", upstream);
      long started = System.nanoTime();
      for (int i = 0; i < 40; i++) {
        assertThat(org.chat().status()).isEqualTo(200);
      }
      // Had a request waited for the collector, it would have waited its export timeout (1 s).
      assertThat((System.nanoTime() - started) / 1_000_000).isLessThan(20_000);
      String metrics =
          node.http.get("/metrics").bearer(TestServer.ADMIN_KEY).send().text();
      Matcher dropped = Pattern.compile(
              "engram_trace_spans_total\\{outcome=\"dropped\"} ([0-9.E]+)")
          .matcher(metrics);
      assertThat(dropped.find()).as(metrics).isTrue();
      assertThat(Double.parseDouble(dropped.group(1))).isGreaterThan(0);
      hanging.answerAgain();
    }
  }

  @Test
  void withTracingOffAClientsTraceContextIsStillHandedToTheProvider() {
    try (TestServer plain = TestServer.start()) {
      PricedOrganization org = PricedOrganization.create(plain, "growth", upstream);
      String traceParent = "00-" + hex(16) + "-" + hex(8) + "-01";
      Http.Response answer = org.http()
          .post("/v1/chat/completions")
          .bearer(org.key())
          .header("traceparent", traceParent)
          .json("{\"model\":\"priced\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")
          .send();
      assertThat(answer.status()).isEqualTo(200);
      assertThat(upstream.traceParents().getLast()).isEqualTo(traceParent);
      assertThat(org.chat().status()).isEqualTo(200);
      assertThat(upstream.traceParents().getLast()).isEmpty();
    }
  }
}
