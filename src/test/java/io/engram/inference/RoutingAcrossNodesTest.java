package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.FakeUpstream;
import io.engram.support.Http;
import io.engram.support.TestDatabases;
import io.engram.support.TestServer;
import org.junit.jupiter.api.Test;

/**
 * Two nodes on one PostgreSQL and one Redis: a model an organization adds on one node routes on
 * the other, and a deployment that one node rests after its failures is rested by the other too,
 * which sends its next request straight to the fallback.
 */
class RoutingAcrossNodesTest {

  @Test
  void providersAndCooldownsAreTheClustersNotANodes() throws Exception {
    String redis = TestDatabases.redisUrl();
    try (FakeUpstream failing = new FakeUpstream();
        FakeUpstream steady = new FakeUpstream();
        TestServer first =
            TestServer.builder().postgres().env("REDIS_URL", redis).start();
        TestServer second =
            TestServer.builder().sharing(first).env("REDIS_URL", redis).start()) {
      String org = first.createOrganization("seed");
      String admin = first.apiKey(org, 1000, "admin");
      String key = first.apiKey(org, 1000, "inference");
      String a = provider(first, org, admin, "failing", failing);
      String b = provider(first, org, admin, "steady", steady);
      Http.Response model = first
          .http
          .post("/v1/organizations/" + org + "/models")
          .bearer(admin)
          .json("{\"id\":\"shared\",\"retries\":0,\"deployments\":[{\"provider_id\":\"" + a
              + "\",\"model\":\"m\"},{\"provider_id\":\"" + b
              + "\",\"model\":\"m\",\"priority\":1}]}")
          .send();
      assertThat(model.status()).as(model.text()).isEqualTo(201);
      // The second node sees the model (the node bus, or its next poll).
      Http.Response before = awaitRouted(second, key);
      assertThat(before.status()).as(before.text()).isEqualTo(200);
      failing.script(FakeUpstream.Script.error(429, "{\"error\":{\"message\":\"slow\"}}", "60"));
      // The first node's request meets the 429: it rests the deployment, and says so to the other.
      int failingCalls = failing.requests().size();
      assertThat(chat(first, key).status()).isEqualTo(200);
      assertThat(failing.requests()).hasSize(failingCalls + 1);
      long deadline = System.nanoTime() + 5_000_000_000L;
      Http.Response after;
      do {
        failingCalls = failing.requests().size();
        after = chat(second, key);
      } while (failing.requests().size() > failingCalls && System.nanoTime() < deadline);
      assertThat(after.status()).isEqualTo(200);
      assertThat(after.header("X-Engram-Attempts")).isEqualTo("1");
      assertThat(failing.requests()).hasSize(failingCalls);
    }
  }

  private static Http.Response awaitRouted(TestServer node, String key)
      throws InterruptedException {
    long deadline = System.nanoTime() + 5_000_000_000L;
    Http.Response answer = chat(node, key);
    while (answer.status() == 404 && System.nanoTime() < deadline) {
      Thread.sleep(100);
      answer = chat(node, key);
    }
    return answer;
  }

  private static String provider(
      TestServer node, String org, String admin, String name, FakeUpstream upstream) {
    Http.Response created = node.http
        .post("/v1/organizations/" + org + "/providers")
        .bearer(admin)
        .json("{\"name\":\"" + name + "\",\"kind\":\"openai\",\"base_url\":\"" + upstream.baseUrl()
            + "\"}")
        .send();
    assertThat(created.status()).as(created.text()).isEqualTo(201);
    return created.json().path("id").asText();
  }

  private static Http.Response chat(TestServer node, String key) {
    return node.http
        .post("/v1/chat/completions")
        .bearer(key)
        .json("{\"model\":\"shared\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")
        .send();
  }
}
