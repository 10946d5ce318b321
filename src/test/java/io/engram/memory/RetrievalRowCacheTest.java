package io.engram.memory;

import static io.engram.memory.PostgresMultiNodeMemoryTest.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Retrieval keeps the rows of its candidates ({@link RowCache}); what it answers must still be the
 * memory as stored, after every kind of change: the uses retrievals write in batches, a
 * reinforcement, an edit of the text or the confidence, a suppression. Each test retrieves first,
 * so the row it then changes is a kept one, and compares what retrieval shows with the memory read
 * from the database ({@code GET}).
 */
class RetrievalRowCacheTest {
  private static TestServer server;
  private static Memories memories;

  @BeforeAll
  static void start() {
    server = TestServer.builder().start();
    memories = Memories.ofNewOrganization(server);
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  /** The memory's view as retrieval shows it for {@code query}, or null if not retrieved. */
  private static JsonNode retrieved(String query, String id) {
    Http.Response response = memories.retrieve(Json.write(Map.of("query", query, "limit", 5)));
    assertThat(response.status()).as(response.text()).isEqualTo(200);
    for (JsonNode memory : response.json().get("memories")) {
      if (memory.get("id").asText().equals(id)) {
        return memory;
      }
    }
    return null;
  }

  private static JsonNode stored(String id) {
    Http.Response response = memories.get(id);
    assertThat(response.status()).as(response.text()).isEqualTo(200);
    return response.json();
  }

  @Test
  void retrievalUsesWrittenInBatchesAreWhatRetrievalShowsNext() throws InterruptedException {
    String query = "When does the Porto depot take deliveries?";
    String id = memories.remember("The Porto depot takes deliveries from seven to eleven.");
    for (int i = 0; i < 5; i++) {
      assertThat(retrieved(query, id)).isNotNull();
    }
    eventually(() -> stored(id).get("retrievalCount").asLong() == 5, "five retrievals stored");
    JsonNode shown = retrieved(query, id);
    assertThat(shown.get("retrievalCount").asLong()).isEqualTo(5);
    assertThat(shown.get("lastUsedAt")).isEqualTo(stored(id).get("lastUsedAt"));
  }

  @Test
  void aReinforcementAndEditsAreShownByTheNextRetrieval() {
    String query = "Who signs off the Gdansk purchase orders?";
    String id = memories.remember("Purchase orders for Gdansk are signed off by Marta.");
    assertThat(retrieved(query, id).get("reinforcementCount").asLong()).isZero();

    assertThat(memories.control(id, "reinforce", null).status()).isEqualTo(200);
    assertThat(retrieved(query, id).get("reinforcementCount").asLong()).isEqualTo(1);

    Http.Response edit = memories.send(
        "PATCH",
        "/" + id,
        "{\"text\":\"Purchase orders for Gdansk are signed off by Tomasz.\",\"confidence\":0.4}");
    assertThat(edit.status()).as(edit.text()).isEqualTo(200);
    JsonNode shown = retrieved(query, id);
    assertThat(shown.get("text").asText()).contains("Tomasz");
    assertThat(shown.get("confidence").asDouble()).isEqualTo(0.4);
    assertThat(shown.get("updatedAt")).isEqualTo(stored(id).get("updatedAt"));

    assertThat(memories.control(id, "suppress", null).status()).isEqualTo(200);
    assertThat(retrieved(query, id)).isNull();
  }
}
