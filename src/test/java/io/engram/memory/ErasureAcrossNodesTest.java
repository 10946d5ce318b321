package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import io.engram.support.FakeUpstream;
import io.engram.support.Http;
import io.engram.support.ServerProcess;
import io.engram.support.TestServer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Erasure on two nodes sharing PostgreSQL: an end user asks to be forgotten on one node; once the
 * receipt is there, neither node returns their memories by retrieval, list, id, export or MCP,
 * their conversation history is gone, the memories that were not theirs are untouched, the
 * receipt's digest checks on both nodes, and the snapshot taken before is listed as still
 * holding them. Bad requests are refused and erase nothing.
 */
class ErasureAcrossNodesTest {
  static FakeUpstream upstream;

  @BeforeAll
  static void start() {
    upstream = new FakeUpstream();
  }

  @AfterAll
  static void stop() {
    upstream.close();
  }

  private static TestServer.Builder node() {
    return TestServer.builder()
        .env("RATE_LIMIT_REQUESTS", "100000")
        .env("ENGRAM_UPSTREAM_URL", upstream.baseUrl())
        .env("ENGRAM_UPSTREAM_MODEL", "upstream-model")
        .env("DEFAULT_MODEL", "engram-chat");
  }

  private static Http.Response ok(Http.Call call, int status) {
    Http.Response response = call.send();
    assertThat(response.status()).as(response.text()).isEqualTo(status);
    return response;
  }

  private static List<String> texts(JsonNode memories) {
    List<String> texts = new ArrayList<>();
    memories.forEach(m -> texts.add(m.get("text").asText()));
    return texts;
  }

  @Test
  void afterTheReceiptNoNodeReturnsAnErasedUsersMemoriesAndTheReceiptChecksOnBoth() {
    try (TestServer first = node().postgres().start();
        TestServer second = node().sharing(first).start()) {
      String org = first.createOrganization("growth");
      String token = first.token(
          org,
          null,
          "inference:chat",
          "memory:read",
          "memory:write",
          "memory:control",
          "memory:delete");
      List<String> adas = new ArrayList<>();
      for (String text : List.of(
          "Ada's passport number ends in 4471.",
          "Ada is allergic to penicillin.",
          "Ada lives on Rua Augusta in Lisbon.")) {
        adas.add(ok(
                first
                    .http
                    .post("/v1/memory")
                    .bearer(token)
                    .json("{\"text\":\"" + text
                        + "\",\"userId\":\"ada\",\"metadata\":{\"kind\":\"pii\"}}"),
                201)
            .json()
            .get("id")
            .asText());
      }
      ok(
          first
              .http
              .post("/v1/memory/events")
              .bearer(token)
              .json("{\"type\":\"profile.updated\",\"source\":\"crm\",\"userId\":\"ada\","
                  + "\"text\":\"Ada's new phone number is 555-0199.\"}"),
          201);
      String bobs = ok(
              first
                  .http
                  .post("/v1/memory")
                  .bearer(token)
                  .json("{\"text\":\"Bob lives on Rua Augusta too.\",\"userId\":\"bob\"}"),
              201)
          .json()
          .get("id")
          .asText();
      ok(
          first
              .http
              .post("/v1/memory")
              .bearer(token)
              .json("{\"text\":\"The Lisbon office is on Rua Augusta.\"}"),
          201);
      // Ada chats (her conversation history), and the second node reads her memories (its index
      // and its row cache hold them).
      ok(
          first
              .http
              .post("/v1/chat/completions")
              .bearer(token)
              .json("{\"model\":\"engram-chat\",\"user\":\"ada\",\"messages\":[{\"role\":\"user\","
                  + "\"content\":\"Where do I live again?\"}]}"),
          200);
      first.engram.inference().flushUsage();
      String retrieve = "{\"query\":\"Where does Ada live on Rua Augusta?\",\"limit\":20}";
      // The second node follows the first's writes within a second or so.
      List<String> followed = List.of();
      for (int i = 0; i < 50 && !followed.contains("Ada lives on Rua Augusta in Lisbon."); i++) {
        ServerProcess.sleep(100);
        followed = texts(ok(
                second
                    .http
                    .post("/v1/memory/retrieve")
                    .bearer(token)
                    .header("X-Engram-User", "ada")
                    .json(retrieve),
                200)
            .json()
            .get("memories"));
      }
      assertThat(followed).contains("Ada lives on Rua Augusta in Lisbon.");
      String nano = first
          .asOperator(first.http.get("/v1/organizations/" + org + "/instances"))
          .json()
          .at("/data/0/id")
          .asText();
      String snapshot = first
          .asOperator(first.http.post("/v1/nano/" + nano + "/snapshot").json("{}"))
          .json()
          .get("id")
          .asText();
      assertThat(first
              .asOperator(first.http.get("/v1/nano/" + nano + "/conversations"))
              .json()
              .get("data"))
          .hasSize(1);

      // Bad requests erase nothing.
      assertThat(first
              .http
              .post("/v1/memory/erase")
              .bearer(token)
              .json("{}")
              .send()
              .status())
          .isEqualTo(400);
      assertThat(first
              .http
              .post("/v1/memory/erase")
              .bearer(token)
              .json("{\"userId\":\"ada\",\"filters\":{\"kind\":{\"near\":1}}}")
              .send()
              .status())
          .isEqualTo(400);
      String reader = first.token(org, null, "memory:read");
      assertThat(first
              .http
              .post("/v1/memory/erase")
              .bearer(reader)
              .json("{\"userId\":\"ada\"}")
              .send()
              .status())
          .isEqualTo(403);
      String carol = first.endUserToken(org, "carol", "memory:delete");
      assertThat(first
              .http
              .post("/v1/memory/erase")
              .bearer(carol)
              .json("{\"userId\":\"ada\"}")
              .send()
              .status())
          .isEqualTo(403);

      Http.Response started = ok(
          first
              .http
              .post("/v1/memory/erase")
              .bearer(token)
              .json("{\"userId\":\"ada\",\"reason\":\"Ada asked to be forgotten\"}"),
          202);
      String erasure = started.json().get("id").asText();
      assertThat(started.header("Location")).isEqualTo("/v1/memory/erasures/" + erasure);
      JsonNode done = Erasing.completed(second, token, "/v1/memory/erasures/" + erasure);
      JsonNode receipt = done.get("receipt");
      assertThat(receipt.at("/memories/count").asInt()).isEqualTo(4); // 3 and the event's candidate
      assertThat(Json.write(receipt.at("/memories/ids"))).contains(adas.get(0), adas.get(2));
      assertThat(receipt.get("digest").asText()).startsWith("sha256:");
      assertThat(receipt.get("userId").asText()).isEqualTo("ada");
      assertThat(Json.write(receipt.get("removed")))
          .contains("\"store\":\"conversation history\",\"count\":1")
          .contains("\"store\":\"business events\",\"count\":1")
          .contains("\"store\":\"response cache\"");
      assertThat(receipt.at("/stillHolding/0/id").asText()).isEqualTo(snapshot);
      assertThat(receipt.at("/stillHolding/0/expiresAt").isNull()).isFalse();

      for (TestServer node : List.of(first, second)) {
        String all = Json.write(ok(
                node.http
                    .post("/v1/memory/retrieve")
                    .bearer(token)
                    .header("X-Engram-User", "ada")
                    .json(retrieve),
                200)
            .json());
        assertThat(all).doesNotContain("4471", "penicillin", "Ada lives");
        assertThat(all).contains("The Lisbon office is on Rua Augusta.");
        JsonNode listed = ok(
                node.http
                    .get("/v1/memory?state=candidate,durable,suppressed,tombstoned")
                    .bearer(token)
                    .header("X-Engram-User", "ada"),
                200)
            .json()
            .get("data");
        for (JsonNode memory : listed) {
          if ("ada".equals(memory.path("userId").asText(null))) {
            assertThat(memory.get("text").asText()).isEmpty();
            assertThat(memory.get("state").asText()).isEqualTo("tombstoned");
            assertThat(memory.get("metadata").isNull()).isTrue();
          }
        }
        JsonNode byId = ok(
                node.http
                    .get("/v1/memory/" + adas.get(1))
                    .bearer(token)
                    .header("X-Engram-User", "ada"),
                200)
            .json();
        assertThat(byId.get("text").asText()).isEmpty();
        // Without the user named, the same answer: an erased memory's id is not a 404 that a
        // guessed userId turns into a 200.
        JsonNode withoutUser =
            ok(node.http.get("/v1/memory/" + adas.get(1)).bearer(token), 200).json();
        assertThat(withoutUser).isEqualTo(byId);
        assertThat(Json.write(ok(
                    node.http
                        .get("/v1/memory/" + adas.get(1) + "/provenance")
                        .bearer(token)
                        .header("X-Engram-User", "ada"),
                    200)
                .json()))
            .doesNotContain("penicillin")
            .contains("erasure " + erasure);
        String export = ok(
                node.http
                    .get("/v1/memory/export?state=candidate,durable,suppressed,tombstoned")
                    .bearer(token)
                    .header("X-Engram-User", "ada"),
                200)
            .text();
        assertThat(export.strip()).startsWith("{\"object\":\"export.end\",\"count\":0");
        Http.Response mcp = node.http
            .post("/mcp")
            .bearer(token)
            .header("Accept", "application/json, text/event-stream")
            .json("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                + "\"recall\",\"arguments\":{\"query\":\"Rua Augusta\",\"userId\":\"ada\"}}}")
            .send();
        assertThat(mcp.text()).doesNotContain("Ada lives", "4471");
        JsonNode check = ok(
                node.http.post("/v1/memory/erasures/" + erasure + "/verify").bearer(token), 200)
            .json();
        assertThat(check.get("verified").asBoolean()).as(check.toString()).isTrue();
        assertThat(check.get("memoriesChecked").asInt()).isEqualTo(4);
        // Not the user's: untouched.
        assertThat(ok(
                    node.http
                        .get("/v1/memory/" + bobs)
                        .bearer(token)
                        .header("X-Engram-User", "bob"),
                    200)
                .json()
                .get("text")
                .asText())
            .isEqualTo("Bob lives on Rua Augusta too.");
      }
      assertThat(first
              .asOperator(first.http.get("/v1/nano/" + nano + "/conversations"))
              .json()
              .get("data"))
          .isEmpty();
      // Another organization never sees the erasure.
      String other = first.createOrganization("growth");
      String stranger = first.token(other, null, "memory:delete");
      assertThat(first
              .http
              .get("/v1/memory/erasures/" + erasure)
              .bearer(stranger)
              .send()
              .status())
          .isEqualTo(404);
    }
  }

  @Test
  void anErasureWhoseNodeStoppedIsTakenOverAndCompleted() {
    try (TestServer first = node().postgres().start();
        TestServer second = node().sharing(first).start()) {
      String org = first.createOrganization("growth");
      String token = first.token(org, null, "memory:read", "memory:write", "memory:delete");
      for (String text : List.of("Zoe's badge is 7731.", "Zoe parks in bay 12.")) {
        ok(
            first
                .http
                .post("/v1/memory")
                .bearer(token)
                .json("{\"text\":\"" + text + "\",\"userId\":\"zoe\"}"),
            201);
      }
      // As a node leaves it when it dies right after taking the request: running, lease over.
      String erasure = io.engram.platform.Ids.newId("era", System.currentTimeMillis());
      first
          .engram
          .services()
          .database()
          .write(h -> h.createUpdate(
                  "INSERT INTO memory_erasures (id, org_id, end_user_id, selector, status,"
                      + " requested_at, lease_until) VALUES (:id, :org, 'zoe', '{}', 'running', 0, 0)")
              .bind("id", erasure)
              .bind("org", org)
              .execute());
      JsonNode done = Erasing.completed(second, token, "/v1/memory/erasures/" + erasure);
      assertThat(done.at("/receipt/memories/count").asInt()).isEqualTo(2);
      assertThat(Json.write(ok(
                  first
                      .http
                      .post("/v1/memory/retrieve")
                      .bearer(token)
                      .header("X-Engram-User", "zoe")
                      .json("{\"query\":\"Where does Zoe park?\"}"),
                  200)
              .json()))
          .doesNotContain("bay 12", "7731");
    }
  }
}
