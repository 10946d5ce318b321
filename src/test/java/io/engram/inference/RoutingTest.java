package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.FakeUpstream;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.net.URI;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * An organization's own providers and models, through real HTTP: two fake OpenAI-compatible
 * providers behind one client model, failing in each way a provider fails, and the gateway
 * retrying, falling back, resting a failing deployment, never replaying a stream that began, and
 * saying which deployment answered.
 */
class RoutingTest {
  static FakeUpstream first;
  static FakeUpstream second;
  static TestServer server;
  static String org;
  static String admin;
  static String key;

  @BeforeAll
  static void start() {
    first = new FakeUpstream();
    second = new FakeUpstream();
    server = TestServer.builder().env("REQUEST_TIMEOUT", "20").start();
    org = server.createOrganization("seed");
    admin = server.apiKey(org, 1000, "admin");
    key = server.apiKey(org, 1000, "inference");
  }

  @AfterAll
  static void stop() {
    server.close();
    first.close();
    second.close();
  }

  @AfterEach
  void normal() {
    first.script(FakeUpstream.Script.NORMAL);
    second.script(FakeUpstream.Script.NORMAL);
  }

  private static Http.Response post(String path, String body) {
    return server
        .http
        .post("/v1/organizations/" + org + path)
        .bearer(admin)
        .json(body)
        .send();
  }

  private static String provider(String name, FakeUpstream upstream, String extra) {
    Http.Response created =
        post("/providers", """
        {"name":"%s","kind":"openai","base_url":"%s","api_key":"key-of-%s"%s}""".formatted(name, upstream.baseUrl(), name, extra));
    assertThat(created.status()).as(created.text()).isEqualTo(201);
    return created.json().path("id").asText();
  }

  /** A model over the two providers: {@code firstGroup} and {@code secondGroup} priorities. */
  private static JsonNode model(String id, String strategy, int firstPriority, int secondPriority) {
    String a = provider(id + "-a", first, "");
    String b = provider(id + "-b", second, "");
    Http.Response created =
        post("/models", """
        {"id":"%s","context_length":4096,"strategy":"%s","retries":2,
         "pricing":{"input_per_million":1.5,"output_per_million":2},
         "deployments":[{"provider_id":"%s","model":"first-model","priority":%d},
                        {"provider_id":"%s","model":"second-model","priority":%d}]}""".formatted(id, strategy, a, firstPriority, b, secondPriority));
    assertThat(created.status()).as(created.text()).isEqualTo(201);
    return created.json();
  }

  private static Http.Response chat(String model, String extra) {
    return server
        .http
        .post("/v1/chat/completions")
        .bearer(key)
        .json("{\"model\":\"" + model + "\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]"
            + extra + "}")
        .send();
  }

  @Test
  void aProvidersKeyIsSealedAndNeverShown() {
    String id = provider("sealed", first, ",\"headers\":{\"X-Team\":\"secret-team-header\"}");
    Http.Response listed =
        server.http.get("/v1/organizations/" + org + "/providers").bearer(admin).send();
    assertThat(listed.status()).isEqualTo(200);
    assertThat(listed.text())
        .contains(id, "\"api_key_set\":true", "X-Team")
        .doesNotContain("key-of-sealed", "secret-team-header");
    Http.Response member = server
        .signedIn(org, "member@example.com", "member")
        .on(server.http.get("/v1/organizations/" + org + "/providers/" + id))
        .send();
    assertThat(member.status()).isEqualTo(403);
    String other = server.createOrganization("seed");
    String otherAdmin = server.apiKey(other, 100, "admin");
    assertThat(server
            .http
            .get("/v1/organizations/" + org + "/providers/" + id)
            .bearer(otherAdmin)
            .send()
            .status())
        .isEqualTo(404);
    assertThat(server
            .http
            .get("/v1/organizations/" + other + "/providers/" + id)
            .bearer(otherAdmin)
            .send()
            .status())
        .isEqualTo(404);
  }

  @Test
  void theFirstGroupAnswersAndTheResponseSaysWhichDeployment() {
    JsonNode model = model("fleet", "weighted", 0, 1);
    Http.Response answer = chat("fleet", "");
    assertThat(answer.status()).as(answer.text()).isEqualTo(200);
    assertThat(answer.header("X-Engram-Deployment"))
        .isEqualTo(model.path("deployments").path(0).path("id").asText());
    assertThat(answer.header("X-Engram-Attempts")).isEqualTo("1");
    assertThat(first.lastRequest().path("model").asText()).isEqualTo("first-model");
    assertThat(first.authorizations().getLast()).isEqualTo("Bearer key-of-fleet-a");
    assertThat(answer.json().path("model").asText()).isEqualTo("fleet");
  }

  @Test
  void usageIsRecordedPerDeploymentWithItsCostAndAFailureCostsNothing() {
    JsonNode model = model("priced", "weighted", 0, 1);
    assertThat(chat("priced", "").status()).isEqualTo(200);
    first.script(FakeUpstream.Script.error(500, "down", null));
    second.script(FakeUpstream.Script.error(500, "down", null));
    assertThat(chat("priced", "").status()).isEqualTo(502);
    Http.Response usage =
        server.http.get("/v1/organizations/" + org + "/usage").bearer(admin).send();
    assertThat(usage.status()).as(usage.text()).isEqualTo(200);
    String firstDeployment = model.path("deployments").path(0).path("id").asText();
    long requests = 0;
    long tokens = 0;
    double cost = 0;
    for (JsonNode row : usage.json().path("data")) {
      if (row.path("model").asText().equals("priced")) {
        requests += row.path("requests").asLong();
        tokens += row.path("total_tokens").asLong();
        cost += row.path("cost_usd").asDouble();
        if (row.path("prompt_tokens").asLong() > 0) {
          assertThat(row.path("deployment").asText()).isEqualTo(firstDeployment);
          // The fake counts a prompt token per word and a completion token per piece.
          double expected = (row.path("prompt_tokens").asLong() * 1.5
                  + row.path("completion_tokens").asLong() * 2.0)
              / 1e6;
          assertThat(row.path("cost_usd").asDouble()).isCloseTo(expected, within(1e-12));
        }
      }
    }
    assertThat(requests).isEqualTo(2);
    assertThat(tokens).isPositive();
    assertThat(cost).isPositive();
    assertThat(usage.json().at("/totals/cost_usd").asDouble()).isCloseTo(cost, within(1e-12));
  }

  @Test
  void aFailureBeforeTheFirstByteFallsBackToTheNextGroup() {
    JsonNode model = model("fallback", "weighted", 0, 1);
    first.script(FakeUpstream.Script.error(503, "{\"error\":{\"message\":\"overloaded\"}}", null));
    int secondBefore = second.requests().size();
    Http.Response answer = chat("fallback", "");
    assertThat(answer.status()).as(answer.text()).isEqualTo(200);
    assertThat(answer.header("X-Engram-Deployment"))
        .isEqualTo(model.path("deployments").path(1).path("id").asText());
    assertThat(answer.header("X-Engram-Attempts")).isEqualTo("2");
    assertThat(second.requests()).hasSize(secondBefore + 1);
    assertThat(second.lastRequest().path("model").asText()).isEqualTo("second-model");
  }

  @Test
  void aDeploymentThatKeepsFailingRestsAndRequestsSkipIt() {
    model("resting", "weighted", 0, 1);
    first.script(FakeUpstream.Script.error(500, "boom", null));
    for (int i = 0; i < 3; i++) {
      assertThat(chat("resting", "").status()).isEqualTo(200);
    }
    int firstBefore = first.requests().size();
    Http.Response skipped = chat("resting", "");
    assertThat(skipped.status()).isEqualTo(200);
    assertThat(skipped.header("X-Engram-Attempts")).isEqualTo("1");
    assertThat(first.requests()).hasSize(firstBefore);
    String metrics =
        server.http.get("/metrics").bearer(TestServer.ADMIN_KEY).send().text();
    assertThat(metrics).contains("engram_deployment_cooldowns_total");
    assertThat(metrics)
        .containsPattern("engram_deployment_requests_total\\{.*outcome=\"upstream_error\"");
  }

  @Test
  void aRateLimitedDeploymentRestsAtOnce() {
    model("limited", "weighted", 0, 1);
    first.script(FakeUpstream.Script.error(429, "{\"error\":{\"message\":\"slow down\"}}", "30"));
    assertThat(chat("limited", "").header("X-Engram-Attempts")).isEqualTo("2");
    int firstBefore = first.requests().size();
    assertThat(chat("limited", "").header("X-Engram-Attempts")).isEqualTo("1");
    assertThat(first.requests()).hasSize(firstBefore);
  }

  @Test
  void anExhaustedChainIsOneClearErrorNamingTheLastFailure() {
    model("exhausted", "weighted", 0, 1);
    first.script(FakeUpstream.Script.error(500, "first is down", null));
    second.script(FakeUpstream.Script.error(502, "second is down too", null));
    Http.Response failed = chat("exhausted", "");
    assertThat(failed.status()).isEqualTo(502);
    assertThat(failed.json().at("/error/code").asText()).isEqualTo("upstream_error");
    // Both deployments, then twice more (the model's two retries): six attempts, the last on
    // the fallback.
    assertThat(failed.json().at("/error/message").asText())
        .contains("6 attempts", "upstream_error", "second is down too");
  }

  @Test
  void aWrongProviderKeyIsAnOperatorProblemAndFallsBack() {
    model("wrongkey", "weighted", 0, 1);
    first.script(FakeUpstream.Script.error(401, "{\"error\":{\"message\":\"bad key\"}}", null));
    Http.Response answer = chat("wrongkey", "");
    assertThat(answer.status()).isEqualTo(200);
    assertThat(answer.header("X-Engram-Attempts")).isEqualTo("2");
    second.script(FakeUpstream.Script.error(401, "{\"error\":{\"message\":\"bad key\"}}", null));
    Http.Response both = chat("wrongkey", "");
    assertThat(both.status()).isEqualTo(502);
    assertThat(both.json().at("/error/code").asText()).isEqualTo("upstream_misconfigured");
  }

  @Test
  void aProviderThatRefusesConnectionsOrAnswersOutOfItsApiGivesWay() throws Exception {
    // Nothing listens on port 1; the other answers 200 with a body that is no chat completion.
    com.sun.net.httpserver.HttpServer odd =
        com.sun.net.httpserver.HttpServer.create(new java.net.InetSocketAddress("127.0.0.1", 0), 8);
    odd.createContext("/", exchange -> {
      byte[] body = "{\"nope\":true}".getBytes(java.nio.charset.StandardCharsets.UTF_8);
      exchange.getResponseHeaders().add("Content-Type", "application/json");
      exchange.sendResponseHeaders(200, body.length);
      exchange.getResponseBody().write(body);
      exchange.close();
    });
    odd.start();
    try {
      Http.Response closed = post(
          "/providers",
          "{\"name\":\"closed\",\"kind\":\"openai\",\"base_url\":\"http://127.0.0.1:1/v1\"}");
      Http.Response strange = post(
          "/providers",
          "{\"name\":\"strange\",\"kind\":\"openai\"," + "\"base_url\":\"http://127.0.0.1:"
              + odd.getAddress().getPort() + "/v1\"}");
      String steady = provider("steady", second, "");
      assertThat(post("/models", """
          {"id":"odd","retries":0,"deployments":[
            {"provider_id":"%s","model":"m","priority":0},
            {"provider_id":"%s","model":"m","priority":1},
            {"provider_id":"%s","model":"m","priority":2}]}""".formatted(
                  closed.json().path("id").asText(), strange.json().path("id").asText(), steady))
              .status())
          .isEqualTo(201);
      Http.Response answer = chat("odd", "");
      assertThat(answer.status()).as(answer.text()).isEqualTo(200);
      assertThat(answer.header("X-Engram-Attempts")).isEqualTo("3");
      String metrics =
          server.http.get("/metrics").bearer(TestServer.ADMIN_KEY).send().text();
      assertThat(metrics)
          .contains("outcome=\"upstream_unavailable\"", "outcome=\"upstream_malformed_response\"");
    } finally {
      odd.stop(0);
    }
  }

  @Test
  void aDrainedDeploymentTakesNothingEvenWhenTheOthersFail() {
    String a = provider("drain-a", first, "");
    String b = provider("drain-b", second, "");
    assertThat(post("/models", """
        {"id":"drained","retries":0,"deployments":[{"provider_id":"%s","model":"m","weight":1},
          {"provider_id":"%s","model":"m","weight":0}]}""".formatted(a, b)).status()).isEqualTo(201);
    first.script(FakeUpstream.Script.error(500, "down", null));
    int secondBefore = second.requests().size();
    assertThat(chat("drained", "").status()).isEqualTo(502);
    assertThat(second.requests()).hasSize(secondBefore);
  }

  @Test
  void theClientsOwnMistakeIsNotRetried() {
    model("rejected", "weighted", 0, 1);
    first.script(FakeUpstream.Script.error(400, "{\"error\":{\"message\":\"bad field\"}}", null));
    int secondBefore = second.requests().size();
    Http.Response refused = chat("rejected", "");
    assertThat(refused.status()).isEqualTo(400);
    assertThat(second.requests()).hasSize(secondBefore);
  }

  @Test
  void aStreamThatBeganIsNeverReplayed() {
    model("cut", "weighted", 0, 1);
    first.script(FakeUpstream.Script.NORMAL.cutAfter(2));
    int secondBefore = second.requests().size();
    Http.Response stream = chat("cut", ",\"stream\":true");
    assertThat(stream.status()).isEqualTo(200);
    assertThat(stream.text()).contains("upstream_stream_cut");
    assertThat(second.requests()).hasSize(secondBefore);
  }

  @Test
  void aSlowProviderGivesWayWithinTheRequestsTime() {
    String slow = provider("slow-a", first, ",\"timeout_seconds\":1");
    String quick = provider("slow-b", second, "");
    assertThat(post("/models", """
        {"id":"slow","deployments":[{"provider_id":"%s","model":"m","priority":0},
          {"provider_id":"%s","model":"m","priority":1}]}""".formatted(slow, quick)).status()).isEqualTo(201);
    first.script(FakeUpstream.Script.NORMAL.headerDelay(3000));
    Http.Response answer = chat("slow", "");
    assertThat(answer.status()).as(answer.text()).isEqualTo(200);
    assertThat(answer.header("X-Engram-Attempts")).isEqualTo("2");
  }

  @Test
  void weightsShareTheRequestsOfOneGroup() {
    model("balanced", "weighted", 0, 0);
    int a = first.requests().size();
    int b = second.requests().size();
    for (int i = 0; i < 40; i++) {
      assertThat(chat("balanced", "").status()).isEqualTo(200);
    }
    assertThat(first.requests().size() - a).isGreaterThan(5);
    assertThat(second.requests().size() - b).isGreaterThan(5);
  }

  @Test
  void theOrganizationsFirewallIsPassedOnEveryCall() {
    model("walled", "weighted", 0, 1);
    int port = URI.create(first.baseUrl()).getPort();
    assertThat(post("/firewall", """
        {"outbound_rules":[{"destination":"127.0.0.0/8","port":%d,"protocol":"tcp","action":"deny"}]}""".formatted(port)).status()).isEqualTo(200);
    try {
      int firstBefore = first.requests().size();
      Http.Response answer = chat("walled", "");
      assertThat(answer.status()).as(answer.text()).isEqualTo(200);
      // The blocked deployment was never called: the first call made answered.
      assertThat(answer.header("X-Engram-Attempts")).isEqualTo("1");
      assertThat(first.requests()).hasSize(firstBefore);
    } finally {
      post("/firewall", "{\"outbound_rules\":[]}");
    }
  }

  @Test
  void whatTheClientSentGoesOnAsSentAndNothingElse() {
    model("passing", "weighted", 0, 1);
    Http.Response answer = chat("passing", """
        ,"reasoning_effort":"low","metadata":{"team":"a"},"service_tier":"flex",
         "prediction":{"type":"content","content":"hi"},"max_completion_tokens":77,
         "verbosity":"low","store":true""");
    assertThat(answer.status()).as(answer.text()).isEqualTo(200);
    JsonNode sent = first.lastRequest();
    assertThat(sent.path("reasoning_effort").asText()).isEqualTo("low");
    assertThat(sent.path("metadata").path("team").asText()).isEqualTo("a");
    assertThat(sent.path("service_tier").asText()).isEqualTo("flex");
    assertThat(sent.path("prediction").path("content").asText()).isEqualTo("hi");
    assertThat(sent.path("max_completion_tokens").asInt()).isEqualTo(77);
    assertThat(sent.path("verbosity").asText()).isEqualTo("low");
    assertThat(sent.path("store").asBoolean()).isTrue();
    for (String added :
        List.of("max_tokens", "temperature", "top_p", "frequency_penalty", "presence_penalty")) {
      assertThat(sent.has(added)).as(added).isFalse();
    }
  }

  /** A name that shows other than it is stored (a bidi override, a zero-width space) is refused. */
  @Test
  void modelNamesHoldOnlyVisibleCharacters() {
    String provider = provider("visible", first, "");
    for (String[] bad : new String[][] {
      {"é😀\u202e", "ok", "id"},
      {"a\u200bb", "ok", "id"},
      {"two words", "ok", "id"},
      {"fine", "up\u202estream", "deployments[0].model"}
    }) {
      String body = "{\"id\":\"" + bad[0] + "\",\"deployments\":[{\"provider_id\":\"" + provider
          + "\",\"model\":\"" + bad[1] + "\"}]}";
      Http.Response refused = post("/models", body);
      assertThat(refused.status()).as(body).isEqualTo(400);
      assertThat(refused.json().at("/error/param").asText()).isEqualTo(bad[2]);
      Http.Response server = RoutingTest.server
          .http
          .post("/v1/admin/models")
          .bearer(TestServer.ADMIN_KEY)
          .json(body)
          .send();
      assertThat(server.status()).as(body).isEqualTo(400);
    }
    Http.Response accented = post(
        "/models",
        "{\"id\":\"modèle-😀\",\"deployments\":" + "[{\"provider_id\":\"" + provider
            + "\",\"model\":\"m\"}]}");
    assertThat(accented.status()).as(accented.text()).isEqualTo(201);
  }

  @Test
  void theServersModelsAreEveryOrganizationsUnlessItHidesThem() {
    Http.Response provider = server
        .http
        .post("/v1/admin/providers")
        .bearer(TestServer.ADMIN_KEY)
        .json("{\"name\":\"shared\",\"kind\":\"openai\",\"base_url\":\"" + second.baseUrl() + "\"}")
        .send();
    assertThat(provider.status()).as(provider.text()).isEqualTo(201);
    Http.Response model = server
        .http
        .post("/v1/admin/models")
        .bearer(TestServer.ADMIN_KEY)
        .json("{\"id\":\"shared-chat\",\"deployments\":[{\"provider_id\":\""
            + provider.json().path("id").asText() + "\",\"model\":\"m\"}]}")
        .send();
    assertThat(model.status()).as(model.text()).isEqualTo(201);
    assertThat(chat("shared-chat", "").status()).isEqualTo(200);
    Http.Response listed = server.http.get("/v1/models").bearer(key).send();
    assertThat(listed.text()).contains("shared-chat");
    Http.Response hidden = server
        .http
        .patch("/v1/organizations/" + org + "/models/shared-chat")
        .bearer(admin)
        .json("{\"hidden\":true}")
        .send();
    assertThat(hidden.status()).as(hidden.text()).isEqualTo(200);
    assertThat(chat("shared-chat", "").status()).isEqualTo(404);
    assertThat(server.http.get("/v1/models").bearer(key).send().text())
        .doesNotContain("shared-chat");
    // An organization's model cannot spend the server's provider.
    Http.Response borrowed = post(
        "/models",
        "{\"id\":\"borrow\",\"deployments\":[{\"provider_id\":\""
            + provider.json().path("id").asText() + "\",\"model\":\"m\"}]}");
    assertThat(borrowed.status()).isEqualTo(400);
  }

  @Test
  void aCredentialLimitedToModelsCallsAndSeesOnlyThose() {
    model("allowed", "weighted", 0, 1);
    model("forbidden", "weighted", 0, 1);
    Http.Response created = server.asOperator(server
        .http
        .post("/v1/organizations/" + org + "/api-keys")
        .json("{\"name\":\"one model\",\"permissions\":[\"inference\"],\"models\":[\"allowed\"]}"));
    assertThat(created.status()).as(created.text()).isEqualTo(201);
    assertThat(created.json().path("models").toString()).isEqualTo("[\"allowed\"]");
    String limited = created.json().path("token").asText();
    Http.Response token = post(
        "/tokens", "{\"name\":\"t\",\"scopes\":[\"inference:chat\"],\"models\":[\"allowed\"]}");
    assertThat(token.status()).as(token.text()).isEqualTo(201);
    String limitedToken = token.json().path("token").asText();
    for (String credential : List.of(limited, limitedToken)) {
      String body = "{\"model\":\"%s\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
      assertThat(server
              .http
              .post("/v1/chat/completions")
              .bearer(credential)
              .json(body.formatted("allowed"))
              .send()
              .status())
          .isEqualTo(200);
      Http.Response refused = server
          .http
          .post("/v1/chat/completions")
          .bearer(credential)
          .json(body.formatted("forbidden"))
          .send();
      assertThat(refused.status()).isEqualTo(403);
      assertThat(refused.json().at("/error/code").asText()).isEqualTo("model_not_allowed");
      assertThat(server
              .http
              .post("/v1/embeddings")
              .bearer(credential)
              .json("{\"model\":\"all-minilm-l6-v2\",\"input\":\"x\"}")
              .send()
              .status())
          .isEqualTo(403);
      Http.Response listed = server.http.get("/v1/models").bearer(credential).send();
      List<String> ids = new java.util.ArrayList<>();
      listed.json().path("data").forEach(m -> ids.add(m.path("id").asText()));
      assertThat(ids).containsExactly("allowed");
    }
  }

  @Test
  void anEmbeddingModelIsRoutedAndAContextTokenEmbedsWithIt() {
    String a = provider("embed-a", first, "");
    String b = provider("embed-b", second, "");
    assertThat(post("/models", """
        {"id":"embedder","type":"embedding","pricing":{"input_per_million":0.02},
         "deployments":[{"provider_id":"%s","model":"text-embed","priority":0},
                        {"provider_id":"%s","model":"text-embed","priority":1}]}""".formatted(a, b)).status()).isEqualTo(201);
    first.script(FakeUpstream.Script.error(503, "busy", null));
    String token = server.token(org, null, "inference:chat");
    Http.Response embedded = server
        .http
        .post("/v1/embeddings")
        .bearer(token)
        .json("{\"model\":\"embedder\",\"input\":[\"one\",\"two\"],\"dimensions\":3}")
        .send();
    assertThat(embedded.status()).as(embedded.text()).isEqualTo(200);
    assertThat(embedded.json().path("model").asText()).isEqualTo("embedder");
    assertThat(embedded.json().at("/data/1/embedding/0").asDouble()).isEqualTo(1.0);
    assertThat(embedded.json().at("/usage/prompt_tokens").asInt()).isEqualTo(14);
    assertThat(second.lastRequest().path("model").asText()).isEqualTo("text-embed");
    assertThat(second.lastRequest().path("dimensions").asInt()).isEqualTo(3);
    assertThat(server.http.get("/v1/models").bearer(token).send().text()).contains("embedder");
    JsonNode usage = server
        .http
        .get("/v1/organizations/" + org + "/usage")
        .bearer(admin)
        .send()
        .json();
    boolean recorded = false;
    for (JsonNode row : usage.path("data")) {
      if (row.path("model").asText().equals("embedder")
          && row.path("prompt_tokens").asInt() > 0) {
        assertThat(row.path("deployment").isTextual()).isTrue();
        assertThat(row.path("cost_usd").asDouble()).isCloseTo(14 * 0.02 / 1e6, within(1e-12));
        recorded = true;
      }
    }
    assertThat(recorded).as(usage.toString()).isTrue();
    // A chat on an embedding model is not a chat model's.
    assertThat(chat("embedder", "").status()).isEqualTo(404);
    // Anthropic's API has no embeddings: no embedding model routes to it.
    String claude = post(
            "/providers",
            "{\"name\":\"claude-e\",\"kind\":\"anthropic\",\"base_url\":\"http://claude.example/v1\"}")
        .json()
        .path("id")
        .asText();
    assertThat(post(
                "/models",
                "{\"id\":\"claude-embed\",\"type\":\"embedding\",\"deployments\":"
                    + "[{\"provider_id\":\"" + claude + "\",\"model\":\"m\"}]}")
            .status())
        .isEqualTo(400);
  }

  @Test
  void anotherOrganizationDoesNotSeeTheModel() {
    model("private", "weighted", 0, 1);
    String other = server.createOrganization("seed");
    String otherKey = server.apiKey(other, 100, "inference");
    Http.Response answer = server
        .http
        .post("/v1/chat/completions")
        .bearer(otherKey)
        .json("{\"model\":\"private\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")
        .send();
    assertThat(answer.status()).isEqualTo(404);
  }

  @Test
  void aProviderCanBeCheckedAndOneInUseCannotBeDeleted() {
    String id = provider("checked", first, "");
    Http.Response ok = post("/providers/" + id + "/check", "{}");
    assertThat(ok.status()).as(ok.text()).isEqualTo(200);
    assertThat(ok.json().path("ok").asBoolean()).isTrue();
    assertThat(ok.json().path("models").toString()).contains("fake-model");
    first.script(FakeUpstream.Script.error(401, "{\"error\":{\"message\":\"bad key\"}}", null));
    Http.Response bad = post("/providers/" + id + "/check", "{}");
    assertThat(bad.json().path("ok").asBoolean()).isFalse();
    assertThat(bad.json().at("/error/code").asText()).isEqualTo("upstream_misconfigured");
    assertThat(post(
                "/models",
                "{\"id\":\"uses-checked\",\"deployments\":[{\"provider_id\":\"" + id
                    + "\",\"model\":\"m\"}]}")
            .status())
        .isEqualTo(201);
    Http.Response refused = server
        .http
        .delete("/v1/organizations/" + org + "/providers/" + id)
        .bearer(admin)
        .send();
    assertThat(refused.status()).isEqualTo(409);
  }

  @Test
  void badBodiesAreClearErrors() {
    String valid = provider("bad-bodies", first, "");
    for (String bad : new String[] {
      "{\"id\":\"x\",\"deployments\":[5]}",
      "{\"id\":\"x\",\"capabilities\":\"all\",\"deployments\":[{\"provider_id\":\"" + valid
          + "\",\"model\":\"m\"}]}",
      "{\"id\":\"x\",\"pricing\":{\"input_per_million\":-1},\"deployments\":[{\"provider_id\":\""
          + valid + "\",\"model\":\"m\"}]}",
      "{\"id\":\"x\",\"deployments\":[{\"provider_id\":\"" + valid
          + "\",\"model\":\"m\",\"weight\":0}]}",
      "{\"id\":7,\"deployments\":[]}",
      "[]"
    }) {
      Http.Response refused = post("/models", bad);
      assertThat(refused.status()).as(bad + refused.text()).isEqualTo(400);
    }
    for (String bad : new String[] {
      "{\"kind\":5}",
      "{\"headers\":[1]}",
      "{\"timeout_seconds\":\"x\"}",
      "{\"api_key\":7}",
      "{\"base_url\":\"http://\"}",
      "{\"unknown\":1}"
    }) {
      Http.Response refused = server
          .http
          .patch("/v1/organizations/" + org + "/providers/" + valid)
          .bearer(admin)
          .json(bad)
          .send();
      assertThat(refused.status()).as(bad + refused.text()).isEqualTo(400);
    }
    assertThat(post("/providers", "{\"name\":\"x\",\"kind\":\"nope\",\"base_url\":\"http://a\"}")
            .json()
            .at("/error/param")
            .asText())
        .isEqualTo("kind");
    assertThat(post("/providers", "{\"name\":\"x\",\"kind\":\"openai\",\"base_url\":\"ftp://a\"}")
            .status())
        .isEqualTo(400);
    assertThat(post(
                "/providers",
                "{\"name\":\"x\",\"kind\":\"openai\",\"base_url\":\"http://a\",\"headers\":{\"Host\":\"b\"}}")
            .status())
        .isEqualTo(400);
    assertThat(post("/models", "{\"id\":\"x\",\"deployments\":[]}").status()).isEqualTo(400);
    assertThat(post(
                "/models",
                "{\"id\":\"x\",\"deployments\":[{\"provider_id\":\"nope\",\"model\":\"m\"}]}")
            .status())
        .isEqualTo(400);
    assertThat(post("/models", "{\"id\":\"x\",\"strategy\":\"random\",\"deployments\":[]}")
            .status())
        .isEqualTo(400);
  }

  @Test
  void aContextTokenEmbeds() {
    String token = server.token(org, null, "inference:chat");
    Http.Response embedded = server
        .http
        .post("/v1/embeddings")
        .bearer(token)
        .json("{\"model\":\"all-minilm-l6-v2\",\"input\":\"hello\"}")
        .send();
    assertThat(embedded.status()).as(embedded.text()).isEqualTo(200);
  }
}
