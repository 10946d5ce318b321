package io.engram.guardrails;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import io.engram.platform.json.Json;
import io.engram.support.FakeUpstream;
import io.engram.support.Http;
import io.engram.support.PricedOrganization;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * An organization's own checks through real HTTP: a JSON Schema the answer must satisfy (whole
 * and streamed), and a webhook of its own (a real HTTP server here) that finds what it finds,
 * redacts or blocks by its spans, and whose silence applies on_error and is counted; a webhook
 * outside the organization's outbound rules, a schema that is not one, or one that reaches
 * outside itself: 400 naming the field.
 */
class CustomChecksTest extends GuardrailServerTest {
  static HttpServer webhook;
  static final List<JsonNode> received = new CopyOnWriteArrayList<>();

  @BeforeAll
  static void startWebhook() throws Exception {
    webhook = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    // Finds the word "bluebird" (the organization's code name) wherever it is; slow on "wait".
    webhook.createContext("/check", exchange -> {
      JsonNode body = Json.read(
          new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8),
          JsonNode.class);
      received.add(body);
      String text = body.path("text").asText();
      if (text.contains("wait")) {
        sleep(800);
      }
      StringBuilder findings = new StringBuilder();
      for (int at = text.indexOf("bluebird"); at >= 0; at = text.indexOf("bluebird", at + 1)) {
        findings
            .append(findings.isEmpty() ? "" : ",")
            .append("{\"kind\":\"code_name\",\"start\":")
            .append(at)
            .append(",\"end\":")
            .append(at + 8)
            .append('}');
      }
      byte[] answer = ("{\"findings\":[" + findings + "]}").getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().add("Content-Type", "application/json");
      exchange.sendResponseHeaders(200, answer.length);
      exchange.getResponseBody().write(answer);
      exchange.close();
    });
    webhook.setExecutor(java.util.concurrent.Executors.newCachedThreadPool());
    webhook.start();
  }

  @AfterAll
  static void stopWebhook() {
    webhook.stop(0);
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static String url() {
    return "http://127.0.0.1:" + webhook.getAddress().getPort() + "/check";
  }

  @Test
  void anAnswerThatIsNotTheSchemasDocumentIsBlockedWholeAndStreamedAndOneThatIsPasses() {
    PricedOrganization org = PricedOrganization.create(server, "growth", upstream);
    String id = created(org, """
        {"name":"Orders as JSON","applies_to":["output"],"check":{"type":"json_schema","schema":
          {"type":"object","required":["order_id"],"properties":{"order_id":{"type":"integer"}}}},
         "action":"block"}""");
    upstream.script(FakeUpstream.Script.NORMAL.pieces("Your order ", "is 42."));
    Http.Response prose = chat(org, "Which order?", false);
    assertThat(prose.status()).isEqualTo(400);
    assertThat(prose.text()).contains(id, "json_schema");
    Http.Response streamed = chat(org, "Which order?", true);
    assertThat(streamed.text()).contains("guardrail_blocked").doesNotContain("Your order");
    upstream.script(FakeUpstream.Script.NORMAL.pieces("{\"order", "_id\": 42}"));
    Http.Response json = chat(org, "Which order?", false);
    assertThat(json.status()).as(json.text()).isEqualTo(200);
    assertThat(json.json().at("/choices/0/message/content").asText())
        .isEqualTo("{\"order_id\": 42}");
    assertThat(chat(org, "Which order?", true).text()).contains("order_id", "[DONE]");
  }

  @Test
  void aSchemaThatIsNotOneOrReachesOutsideItselfIsRefusedByName() {
    PricedOrganization org = PricedOrganization.create(server, "growth", upstream);
    Map<String, String> bad = Map.of(
        "check.schema",
        "{\"type\":\"json_schema\",\"schema\":{\"type\":\"shape\"}}",
        "action",
        "{\"type\":\"json_schema\",\"schema\":{\"type\":\"object\"}}");
    for (Map.Entry<String, String> body : bad.entrySet()) {
      Http.Response refused = org.post(
          "/guardrails",
          "{\"name\":\"x\",\"applies_to\":[\"output\"],"
              + "\"check\":" + body.getValue() + ",\"action\":\""
              + (body.getKey().equals("action") ? "redact" : "block") + "\"}");
      assertThat(refused.status()).as(refused.text()).isEqualTo(400);
      assertThat(refused.json().at("/error/param").asText()).isEqualTo(body.getKey());
    }
    Http.Response remote = org.post("/guardrails", """
        {"name":"x","applies_to":["output"],"action":"block","check":{"type":"json_schema",
         "schema":{"$ref":"https://example.com/order.json"}}}""");
    assertThat(remote.json().at("/error/param").asText()).isEqualTo("check.schema");
    assertThat(remote.text()).contains("refers outside the schema");
  }

  @Test
  void aWebhookRedactsWhatItFindsBeforeTheProviderAndBlocksWhenAsked() {
    PricedOrganization org = PricedOrganization.create(server, "growth", upstream);
    String redact = created(org, """
        {"name":"Code names","applies_to":["input"],"check":{"type":"webhook","url":"%s",
         "timeout_ms":2000},"action":"redact"}""".formatted(url()));
    Http.Response answered = chat(org, "Ship bluebird to Lyon, then bluebird again", false);
    assertThat(answered.status()).as(answered.text()).isEqualTo(200);
    assertThat(upstream.lastRequest().at("/messages/0/content").asText())
        .isEqualTo("Ship [CODE_NAME_1] to Lyon, then [CODE_NAME_1] again");
    assertThat(answered.header("x-engram-guardrails"))
        .contains(redact + ";phase=input;action=redact;kinds=code_name");
    assertThat(received.getLast().path("guardrail_id").asText()).isEqualTo(redact);
    assertThat(received.getLast().path("organization_id").asText()).isEqualTo(org.id());

    String block = created(org, """
        {"name":"Code names out","applies_to":["output"],"check":{"type":"webhook","url":"%s"},
         "action":"block"}""".formatted(url()));
    upstream.script(FakeUpstream.Script.NORMAL.pieces("The plan is ", "bluebird", "."));
    Http.Response refused = chat(org, "What is the plan?", false);
    assertThat(refused.status()).isEqualTo(400);
    assertThat(refused.text()).contains(block).doesNotContain("bluebird");
  }

  @Test
  void aWebhookThatDoesNotAnswerInTimeAppliesOnErrorAndIsCounted() {
    PricedOrganization org = PricedOrganization.create(server, "growth", upstream);
    String allow = created(org, """
        {"name":"Slow but lenient","applies_to":["input"],"check":{"type":"webhook","url":"%s",
         "timeout_ms":100,"on_error":"allow"},"action":"block"}""".formatted(url()));
    assertThat(chat(org, "please wait for it", false).status()).isEqualTo(200);
    String metrics = server.asOperator(server.http.get("/metrics")).text();
    assertThat(metrics)
        .contains("engram_guardrail_webhook_errors_total{guardrail=\"" + allow
            + "\",reason=\"timeout\"} 1.0");
    server
        .http
        .patch("/v1/organizations/" + org.id() + "/guardrails/" + allow)
        .bearer(org.admin())
        .json("{\"check\":{\"type\":\"webhook\",\"url\":\"" + url()
            + "\",\"timeout_ms\":100,\"on_error\":\"block\"}}")
        .send();
    Http.Response refused = chat(org, "please wait for it", false);
    assertThat(refused.status()).isEqualTo(400);
    assertThat(refused.text()).contains(allow, "webhook_unavailable");
  }

  @Test
  void aWebhookOutsideTheOrganizationsOutboundRulesOrNotAnHttpUrlIsRefusedByName() {
    PricedOrganization org = PricedOrganization.create(server, "growth", upstream);
    Http.Response firewall =
        org.post("/firewall", """
        {"outbound_rules":[{"destination":"127.0.0.1","port":%d,"protocol":"tcp","action":"deny"}]}""".formatted(webhook.getAddress().getPort()));
    assertThat(firewall.status()).as(firewall.text()).isEqualTo(200);
    Http.Response outside = org.post("/guardrails", """
        {"name":"x","applies_to":["input"],"check":{"type":"webhook","url":"%s"},"action":"flag"}""".formatted(url()));
    assertThat(outside.status()).as(outside.text()).isEqualTo(400);
    assertThat(outside.json().at("/error/param").asText()).isEqualTo("check.url");
    for (String url : List.of("ftp://127.0.0.1/x", "http://user:pw@127.0.0.1/x", "not a url")) {
      Http.Response refused = org.post("/guardrails", """
          {"name":"x","applies_to":["input"],"check":{"type":"webhook","url":"%s"},"action":"flag"}""".formatted(url));
      assertThat(refused.json().at("/error/param").asText()).as(url).isEqualTo("check.url");
    }
    Http.Response timeout = org.post("/guardrails", """
        {"name":"x","applies_to":["input"],"check":{"type":"webhook","url":"http://10.1.2.3/x",
         "timeout_ms":60000},"action":"flag"}""");
    assertThat(timeout.json().at("/error/param").asText()).isEqualTo("check.timeout_ms");
  }
}
