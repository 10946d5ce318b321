package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.platform.json.Json;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Text made only of invisible characters is empty (platform.VisibleText): a 400 naming the field on
 * every route that would embed it, never a 500 from the embedding model, and nothing stored.
 */
class InvisibleTextTest {
  /** Each alone, and all together: none is a letter, digit, mark of punctuation or symbol. */
  static final List<String> INVISIBLE = List.of(
      "\u200b",
      "\u00a0",
      "\ufeff",
      "\u0001",
      "\u0085",
      "\u0301",
      "\u2028",
      "\u3000",
      "\uDB40\uDC41\uDB40\uDC42", // tag characters A and B (U+E0041, U+E0042)
      "\u200b\u00a0\ufeff\u0001\u0085\u0301 \t\n");

  static TestServer server;
  static String token;
  static String key;

  @BeforeAll
  static void start() {
    server = TestServer.start();
    String org = server.createOrganization("seed");
    token = server.token(org, null, "memory:read", "memory:write");
    key = server.apiKey(org, 100_000, "inference");
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private static void refused(Http.Response response, String param, String text) {
    assertThat(response.status()).as("%s %s", Json.write(text), response.text()).isEqualTo(400);
    assertThat(response.json().at("/error/param").asText()).isEqualTo(param);
  }

  @Test
  void invisibleTextIsRefusedWhereverItWouldBeEmbedded() {
    // Counted, not assumed empty: the other tests of this class store memories, in any order.
    long before = memoryCount();
    for (String text : INVISIBLE) {
      String json = Json.write(text);
      refused(
          server
              .http
              .post("/v1/memory")
              .bearer(token)
              .json("{\"text\":" + json + "}")
              .send(),
          "text",
          text);
      refused(
          server
              .http
              .post("/v1/memory/agents/sales")
              .bearer(token)
              .json("{\"text\":" + json + "}")
              .send(),
          "text",
          text);
      for (String route : List.of("retrieve", "recall", "search", "agents/sales/retrieve")) {
        refused(
            server
                .http
                .post("/v1/memory/" + route)
                .bearer(token)
                .json("{\"query\":" + json + "}")
                .send(),
            "query",
            text);
      }
      refused(
          server
              .http
              .post("/v1/memory/events")
              .bearer(token)
              .json("{\"type\":\"note\",\"source\":\"crm\",\"text\":" + json + "}")
              .send(),
          "text",
          text);
      refused(
          server
              .http
              .post("/v1/embeddings")
              .bearer(key)
              .json("{\"model\":\"all-minilm-l6-v2\",\"input\":" + json + "}")
              .send(),
          "input",
          text);
      refused(
          server
              .http
              .post("/v1/embeddings")
              .bearer(key)
              .json("{\"model\":\"all-minilm-l6-v2\",\"input\":[\"fine\"," + json + "]}")
              .send(),
          "input",
          text);
    }
    assertThat(memoryCount()).as("nothing was stored").isEqualTo(before);
  }

  @Test
  void aStatementOfInvisibleWordsInAnEventIsSkippedAsTooShort() {
    Http.Response staged = server
        .http
        .post("/v1/memory/events")
        .bearer(token)
        .json(Json.write(Map.of(
            "type",
            "note",
            "source",
            "crm",
            "text",
            "Acme renewed the support contract. \u200b \u200b \u200b \u200b.")))
        .send();
    assertThat(staged.status()).as(staged.text()).isEqualTo(201);
    assertThat(staged.text()).contains("too_short").contains("Acme renewed the support contract.");
  }

  @Test
  void textWithAVisibleCharacterAmongInvisibleOnesIsText() {
    Http.Response kept = server
        .http
        .post("/v1/memory")
        .bearer(token)
        .json(Json.write(Map.of("text", "\u200bAcme\u00a0pays in euros\ufeff")))
        .send();
    assertThat(kept.status()).as(kept.text()).isEqualTo(201);
  }

  private static long memoryCount() {
    return server
        .engram
        .services()
        .database()
        .read(h ->
            h.createQuery("SELECT COUNT(*) FROM memories").mapTo(Long.class).one());
  }
}
