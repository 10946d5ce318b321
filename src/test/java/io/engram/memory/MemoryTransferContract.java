package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.platform.json.Json;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Export and import through HTTP: an organization's memories (shared, an agent's, end users',
 * a history of superseded facts, suppressed ones, reinforced ones) exported and imported into
 * another organization rank the same there; an export resumes by its cursor; an import sent again
 * writes nothing twice; a file with a mistake is refused whole, naming its lines; boundaries hold.
 * On SQLite and PostgreSQL.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class MemoryTransferContract {
  static final String JSON_LINES = "application/x-ndjson";

  TestServer server;
  String source;
  String sourceToken;
  int exported;

  abstract TestServer startServer();

  @BeforeAll
  void start() {
    server = startServer();
    source = server.createOrganization("growth");
    sourceToken = token(source);
    String[] facts = {
      "The Lisbon office closes at six on Fridays.",
      "Invoices above 10,000 euros need the finance director's approval.",
      "The staging database is refreshed from production every Sunday night.",
      "Customer Acme renews its contract every April.",
      "The on-call rotation changes on Mondays at nine.",
      "Deployments are frozen during the last week of December.",
      "The VPN certificate expires every ninety days.",
      "Support answers tickets in English, Portuguese and Spanish.",
    };
    for (int i = 0; i < facts.length; i++) {
      encode(
          "/v1/memory",
          "{\"text\":\"" + facts[i] + "\",\"subject\":\"office\","
              + "\"metadata\":{\"team\":\"" + (i % 2 == 0 ? "ops" : "sales") + "\",\"rank\":" + i
              + "},\"occurredAt\":\"2026-0" + (i % 9 + 1) + "-03T10:00:00Z\"}");
    }
    encode(
        "/v1/memory",
        "{\"text\":\"Ada prefers meetings before noon.\",\"userId\":\"ada\","
            + "\"sessionId\":\"s-1\",\"expiresAt\":\"2099-01-01T00:00:00Z\"}");
    encode("/v1/memory", "{\"text\":\"Bob prefers written status updates.\",\"userId\":\"bob\"}");
    encode(
        "/v1/memory/agents/helpdesk",
        "{\"text\":\"Password resets go through the self-service portal.\"}");
    String engineer = encode(
        "/v1/memory",
        "{\"text\":\"Ada's role is engineer.\","
            + "\"subject\":\"Ada\",\"validFrom\":\"2025-01-01T00:00:00Z\"}");
    encode(
        "/v1/memory",
        "{\"text\":\"Ada's role is engineering manager.\",\"subject\":\"Ada\","
            + "\"validFrom\":\"2026-03-01T00:00:00Z\",\"supersedes\":\"" + engineer + "\"}");
    String suppressed = encode("/v1/memory", "{\"text\":\"The old wiki lives at wiki-old.\"}");
    call(server.http.post("/v1/memory/" + suppressed + "/suppress").bearer(sourceToken), 200);
    String reinforced =
        encode("/v1/memory", "{\"text\":\"Expense reports are due by the fifth.\"}");
    for (int i = 0; i < 3; i++) {
      call(server.http.post("/v1/memory/" + reinforced + "/reinforce").bearer(sourceToken), 200);
    }
    exported = facts.length + 7;
  }

  @AfterAll
  void stop() {
    server.close();
  }

  String token(String org) {
    return server.token(
        org, null, "memory:read", "memory:write", "memory:control", "memory:delete");
  }

  private String encode(String path, String body) {
    Http.Response response =
        server.http.post(path).bearer(sourceToken).json(body).send();
    assertThat(response.status()).as(response.text()).isEqualTo(201);
    return response.json().get("id").asText();
  }

  private static Http.Response call(Http.Call call, int status) {
    Http.Response response = call.send();
    assertThat(response.status()).as(response.text()).isEqualTo(status);
    return response;
  }

  private List<JsonNode> export(String bearer, String query) {
    Http.Response response = call(server.http.get("/v1/memory/export" + query).bearer(bearer), 200);
    assertThat(response.header("Content-Type")).startsWith(JSON_LINES);
    List<JsonNode> lines = new ArrayList<>();
    for (String line : response.text().split("\n")) {
      lines.add(Json.read(line, JsonNode.class));
    }
    assertThat(lines.getLast().get("object").asText()).isEqualTo("export.end");
    assertThat(lines.getLast().get("count").asInt()).isEqualTo(lines.size() - 1);
    return lines;
  }

  private static String text(List<JsonNode> lines) {
    StringBuilder file = new StringBuilder();
    lines.forEach(line -> file.append(Json.write(line)).append('\n'));
    return file.toString();
  }

  private Http.Response importFile(String bearer, String path, String file) {
    return server.http.post(path).bearer(bearer).body(JSON_LINES, file).send();
  }

  /** The texts a retrieval ranks, best first, with their scores: all the caller sees (no cut). */
  private List<Map.Entry<String, Double>> ranked(String bearer, String userId, String query) {
    Http.Call call = server.http.post("/v1/memory/retrieve").bearer(bearer);
    if (userId != null) {
      call.header("X-Engram-User", userId);
    }
    JsonNode answer =
        call(call.json("{\"query\":\"" + query + "\",\"limit\":20}"), 200).json();
    List<Map.Entry<String, Double>> ranked = new ArrayList<>();
    answer
        .get("memories")
        .forEach(
            m -> ranked.add(Map.entry(m.get("text").asText(), m.get("score").asDouble())));
    return ranked;
  }

  @Test
  void anOrganizationExportedAndImportedElsewhereHoldsTheSameMemoriesAndRanksThemTheSame() {
    List<JsonNode> lines = export(sourceToken, "");
    assertThat(lines).hasSize(exported + 1);
    String target = server.createOrganization("growth");
    String targetToken = token(target);

    Http.Response first = call(
        server.http.post("/v1/memory/import").bearer(targetToken).body(JSON_LINES, text(lines)),
        200);
    JsonNode summary = first.json();
    assertThat(summary.get("imported").asInt()).isEqualTo(exported);
    assertThat(summary.get("vectorsKept").asInt()).isEqualTo(exported);
    assertThat(summary.get("vectorsComputed").asInt()).isZero();
    // Every id is the source organization's, so each was renamed, the same way every time.
    assertThat(summary.get("renamedCount").asInt()).isEqualTo(exported);

    // The same memories, fields and uses, under the new ids; the supersession follows its rename.
    Map<String, String> renamed = new HashMap<>();
    summary
        .get("renamed")
        .properties()
        .forEach(e -> renamed.put(e.getKey(), e.getValue().asText()));
    List<JsonNode> copies = export(targetToken, "");
    assertThat(copies).hasSize(lines.size());
    Map<String, JsonNode> copyById = new HashMap<>();
    copies.forEach(c -> copyById.put(c.path("id").asText(), c));
    for (JsonNode original : lines.subList(0, exported)) {
      JsonNode copy = copyById.get(renamed.get(original.get("id").asText()));
      assertThat(copy).as(original.toString()).isNotNull();
      for (String field : List.of(
          "text",
          "subject",
          "memoryKind",
          "state",
          "agent",
          "userId",
          "sessionId",
          "metadata",
          "occurredAt",
          "createdAt",
          "validFrom",
          "validUntil",
          "expiresAt",
          "reinforcementCount",
          "uses",
          "embedding")) {
        assertThat(copy.get(field)).as(field).isEqualTo(original.get(field));
      }
      JsonNode supersedes = original.get("supersedes");
      assertThat(copy.get("supersedes").asText(null))
          .isEqualTo(supersedes.isNull() ? null : renamed.get(supersedes.asText()));
      // Its provenance came along, and says it was imported.
      JsonNode history = copy.get("transitions");
      assertThat(history).hasSize(original.get("transitions").size() + 1);
      for (int i = 0; i < original.get("transitions").size(); i++) {
        assertThat(history.get(i)).isEqualTo(original.get("transitions").get(i));
      }
      assertThat(history.get(history.size() - 1).get("action").asText()).isEqualTo("import");
    }

    for (String[] ask : new String[][] {
      {null, "When does the Lisbon office close?"},
      {null, "what is Ada's role"},
      {"ada", "When does Ada like to meet?"},
      {"bob", "how should I update Bob"},
      {null, "expense reports"},
    }) {
      List<Map.Entry<String, Double>> there = ranked(sourceToken, ask[0], ask[1]);
      List<Map.Entry<String, Double>> here = ranked(targetToken, ask[0], ask[1]);
      // The same memories with the same scores (memories tied on score may swap: ids break ties).
      assertThat(here.getFirst().getKey()).as(ask[1]).isEqualTo(there.getFirst().getKey());
      Map<String, Double> scores = new HashMap<>();
      there.forEach(e -> scores.put(e.getKey(), e.getValue()));
      assertThat(here).hasSameSizeAs(there);
      for (Map.Entry<String, Double> e : here) {
        assertThat(scores).as(ask[1]).containsKey(e.getKey());
        assertThat(e.getValue()).as(e.getKey()).isCloseTo(scores.get(e.getKey()), within(0.005));
      }
    }

    // Sent again (a cut connection, a retry): nothing is written twice.
    JsonNode again = call(
            server.http.post("/v1/memory/import").bearer(targetToken).body(JSON_LINES, text(lines)),
            200)
        .json();
    assertThat(again.get("imported").asInt()).isZero();
    assertThat(again.get("alreadyPresent").asInt()).isEqualTo(exported);
    assertThat(export(targetToken, "")).hasSize(lines.size());
    // And into the organization it came from: every memory is already there.
    JsonNode home = call(
            server.http.post("/v1/memory/import").bearer(sourceToken).body(JSON_LINES, text(lines)),
            200)
        .json();
    assertThat(home.get("alreadyPresent").asInt()).isEqualTo(exported);
    assertThat(home.get("imported").asInt()).isZero();
  }

  @Test
  void anExportResumesFromItsCursorAndAHalfImportFinishesWhenSentAgain() {
    List<JsonNode> whole = export(sourceToken, "");
    List<JsonNode> parts = new ArrayList<>();
    String after = null;
    int requests = 0;
    do {
      List<JsonNode> part =
          export(sourceToken, "?limit=4" + (after == null ? "" : "&after=" + after));
      parts.addAll(part.subList(0, part.size() - 1));
      after = part.getLast().get("nextAfter").asText(null);
      requests++;
    } while (after != null);
    assertThat(requests).isEqualTo((exported + 3) / 4);
    // (Compared by id and text: retrievals of other tests may land between two reads.)
    assertThat(parts.stream()
            .map(p -> p.get("id").asText() + p.get("text").asText())
            .toList())
        .isEqualTo(whole.subList(0, exported).stream()
            .map(p -> p.get("id").asText() + p.get("text").asText())
            .toList());

    // One filter's memories: the same query parameters as a list.
    assertThat(export(
            sourceToken,
            "?filters="
                + java.net.URLEncoder.encode(
                    "{\"team\":\"ops\"}", java.nio.charset.StandardCharsets.UTF_8)))
        .hasSize(5);
    assertThat(export(sourceToken, "?subject=Ada&limit=1")
            .getLast()
            .get("nextAfter")
            .isNull())
        .isFalse();
    assertThat(export(sourceToken, "?filters=%7B%22rank%22%3A%7B%22gte%22%3A6%7D%7D&limit=2")
            .getLast()
            .get("nextAfter")
            .isNull())
        .isTrue();

    // Without vectors, the model computes them; half of the file first, then all of it.
    List<JsonNode> light = export(sourceToken, "?embeddings=false");
    assertThat(light.getFirst().has("embedding")).isFalse();
    String target = server.createOrganization("growth");
    String targetToken = token(target);
    JsonNode half = call(
            server
                .http
                .post("/v1/memory/import")
                .bearer(targetToken)
                .body(JSON_LINES, text(light.subList(0, 6))),
            200)
        .json();
    assertThat(half.get("imported").asInt()).isEqualTo(6);
    assertThat(half.get("vectorsComputed").asInt()).isEqualTo(6);
    JsonNode rest = call(
            server.http.post("/v1/memory/import").bearer(targetToken).body(JSON_LINES, text(light)),
            200)
        .json();
    assertThat(rest.get("alreadyPresent").asInt()).isEqualTo(6);
    assertThat(rest.get("imported").asInt()).isEqualTo(exported - 6);
    assertThat(ranked(targetToken, null, "When does the Lisbon office close?")
            .getFirst()
            .getKey())
        .isEqualTo("The Lisbon office closes at six on Fridays.");

    // A line repeated in one file (with its id, or a hand-written one without) is one memory.
    String twice = server.createOrganization("growth");
    String hand = "{\"text\":\"Badges are renewed every January.\"}";
    JsonNode repeated = call(
            server
                .http
                .post("/v1/memory/import")
                .bearer(token(twice))
                .body(
                    JSON_LINES,
                    text(light.subList(0, 1)) + text(light.subList(0, 1)) + hand + "\n" + hand),
            200)
        .json();
    assertThat(repeated.get("imported").asInt()).isEqualTo(2);
    assertThat(repeated.get("alreadyPresent").asInt()).isEqualTo(2);
  }

  @Test
  void aFileWithMistakesIsRefusedWholeNamingEachLineAndWritesNothing() {
    String target = server.createOrganization("growth");
    String targetToken = token(target);
    String file = String.join(
        "\n",
        "{\"text\":\"A good line.\"}",
        "",
        "{\"text\": \"broken",
        "{\"text\":\"Another good line.\"}",
        "{\"text\":\"A bad kind.\",\"memoryKind\":\"gossip\"}",
        "{\"text\":\"A bad id.\",\"id\":\"mem_nope\"}",
        "{\"text\":\"A typo.\",\"memorykind\":\"fact\"}",
        "[1, 2]",
        "{\"text\":\"Bad uses.\",\"uses\":{\"recent\":[]}}",
        "{\"text\":\"Bad vector.\",\"embedding\":{\"model\":\"m\",\"vector\":\"###\"}}",
        "{\"object\":\"export.end\",\"count\":1}");
    Http.Response refused = importFile(targetToken, "/v1/memory/import", file);
    assertThat(refused.status()).as(refused.text()).isEqualTo(400);
    List<String> fields = new ArrayList<>();
    refused.json().at("/error/errors").forEach(e -> fields.add(e.get("param").asText()));
    assertThat(fields)
        .as(refused.text())
        .containsExactly(
            "line 3",
            "line 5.memoryKind",
            "line 6.id",
            "line 7.memorykind",
            "line 8",
            "line 9.uses.recent",
            "line 10.embedding.vector");
    assertThat(refused.json().at("/error/message").asText()).startsWith("line 3: not JSON");
    assertThat(export(targetToken, "")).hasSize(1);

    // Asked to skip them, the mistaken lines are left out and reported; the rest is written,
    // each memory's provenance naming its line as the file numbers it.
    Http.Response skipped = importFile(targetToken, "/v1/memory/import?onError=skip", file);
    assertThat(skipped.status()).as(skipped.text()).isEqualTo(200);
    assertThat(skipped.json().get("imported").asInt()).isEqualTo(2);
    assertThat(skipped.json().get("rejected").asInt()).isEqualTo(7);
    assertThat(skipped.json().at("/errors/0/param").asText()).isEqualTo("line 3");
    List<JsonNode> written = export(targetToken, "");
    assertThat(written).hasSize(3);
    JsonNode another = written.stream()
        .filter(m -> m.path("text").asText().equals("Another good line."))
        .findFirst()
        .orElseThrow();
    assertThat(another.get("transitions").get(0).get("reason").asText())
        .isEqualTo("imported from line 4");
    assertThat(importFile(targetToken, "/v1/memory/import?onError=maybe", file).status())
        .isEqualTo(400);

    assertThat(importFile(targetToken, "/v1/memory/import", "\n\n").status()).isEqualTo(400);
    Http.Response notUtf8 = server
        .http
        .post("/v1/memory/import")
        .bearer(targetToken)
        .bytes(
            JSON_LINES,
            new byte[] {'{', '"', 't', 'e', 'x', 't', '"', ':', '"', (byte) 0xC3, '"', '}', '\n'})
        .send();
    assertThat(notUtf8.status()).as(notUtf8.text()).isEqualTo(400);
    assertThat(notUtf8.json().at("/error/param").asText()).isEqualTo("line 1");
    assertThat(server
            .http
            .post("/v1/memory/import")
            .bearer(targetToken)
            .body("application/xml", "<memory/>")
            .send()
            .status())
        .isEqualTo(415);
    assertThat(export(targetToken, "")).hasSize(3);
  }

  @Test
  void boundariesHoldForExportAndImport() {
    // An end user's export is theirs; an agent's is the agent's.
    List<JsonNode> ada = new ArrayList<>();
    Http.Response byUser = call(
        server.http.get("/v1/memory/export").bearer(sourceToken).header("X-Engram-User", "ada"),
        200);
    for (String line : byUser.text().split("\n")) {
      ada.add(Json.read(line, JsonNode.class));
    }
    assertThat(ada).hasSize(2);
    assertThat(ada.getFirst().get("text").asText()).isEqualTo("Ada prefers meetings before noon.");
    Http.Response helpdesk =
        call(server.http.get("/v1/memory/agents/helpdesk/export").bearer(sourceToken), 200);
    assertThat(helpdesk.text()).contains("self-service portal").doesNotContain("Lisbon");

    String target = server.createOrganization("growth");
    String targetToken = token(target);
    // A line naming another agent than the route's, or a user the token may not act for.
    Http.Response otherAgent = importFile(
        targetToken,
        "/v1/memory/agents/helpdesk/import",
        "{\"text\":\"Misplaced.\",\"agent\":\"billing\"}");
    assertThat(otherAgent.status()).as(otherAgent.text()).isEqualTo(400);
    assertThat(otherAgent.json().at("/error/param").asText()).isEqualTo("line 1.agent");
    String carol =
        server.endUserToken(target, "carol", "memory:read", "memory:write", "memory:control");
    Http.Response otherUser =
        importFile(carol, "/v1/memory/import", "{\"text\":\"Not Carol's.\",\"userId\":\"dave\"}");
    assertThat(otherUser.status()).as(otherUser.text()).isEqualTo(403);
    assertThat(otherUser.json().at("/error/message").asText()).startsWith("line 1: ");
    // A user-bound token imports as that user, and exports only that user's.
    call(
        server
            .http
            .post("/v1/memory/import")
            .bearer(carol)
            .body(JSON_LINES, "{\"text\":\"Carol reads the weekly digest.\"}"),
        200);
    call(
        server
            .http
            .post("/v1/memory/import")
            .bearer(targetToken)
            .body(JSON_LINES, "{\"text\":\"Everyone gets the weekly digest.\"}"),
        200);
    Http.Response carols = call(server.http.get("/v1/memory/export").bearer(carol), 200);
    assertThat(carols.text()).contains("Carol reads").doesNotContain("Everyone gets");
    assertThat(Json.read(carols.text().split("\n")[0], ObjectNode.class)
            .get("userId")
            .asText())
        .isEqualTo("carol");
    // Reading is not writing, and writing alone is not restoring states and uses; another
    // organization's memories never come out.
    String reader = server.token(target, null, "memory:read");
    assertThat(importFile(reader, "/v1/memory/import", "{\"text\":\"x\"}").status())
        .isEqualTo(403);
    String writer = server.token(target, null, "memory:write");
    Http.Response writeOnly = importFile(writer, "/v1/memory/import", "{\"text\":\"x\"}");
    assertThat(writeOnly.status()).isEqualTo(403);
    assertThat(writeOnly.json().at("/error/message").asText()).contains("memory:control");
    assertThat(
            call(server.http.get("/v1/memory/export").bearer(targetToken), 200).text())
        .doesNotContain("Lisbon");

    // A line saying what a durable memory of its boundary says is a duplicate, not a second copy.
    JsonNode twice = call(
            server
                .http
                .post("/v1/memory/import")
                .bearer(targetToken)
                .body(
                    JSON_LINES,
                    "{\"text\":\"Everyone gets the weekly digest.\","
                        + "\"occurredAt\":\"2026-01-01T00:00:00Z\"}\n"
                        + "{\"text\":\"everyone gets the weekly digest\","
                        + "\"occurredAt\":\"2026-01-01T00:00:00Z\"}"),
            200)
        .json();
    assertThat(twice.get("imported").asInt()).isEqualTo(1);
    assertThat(twice.get("duplicates").asInt()).isEqualTo(1);
  }
}
