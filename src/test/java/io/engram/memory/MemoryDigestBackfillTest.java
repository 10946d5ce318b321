package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.Http;
import io.engram.support.TestServer;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Memories written before deduplication (no digest yet) are found by it after the next start:
 * the job gives them their digest, and an encode of what one of them says reinforces it.
 */
class MemoryDigestBackfillTest {

  @Test
  void memoriesWrittenBeforeDeduplicationAreMatchedAfterTheNextStart(@TempDir Path data)
      throws Exception {
    String org;
    String token;
    String id;
    try (TestServer first = TestServer.builder().dataDir(data).start()) {
      org = first.createOrganization("growth");
      token = first.token(org, null, "memory:read", "memory:write");
      id = Memories.of(first, token).remember("Hooli's office closes at six");
    }
    // As a database of the version before holds it: no digest.
    try (Connection sqlite =
            DriverManager.getConnection("jdbc:sqlite:" + data.resolve("engram.db"));
        Statement statement = sqlite.createStatement()) {
      assertThat(statement.executeUpdate("UPDATE memories SET text_digest = NULL"))
          .isEqualTo(1);
    }
    try (TestServer again = TestServer.builder().dataDir(data).start()) {
      long deadline = System.nanoTime() + 20_000_000_000L;
      while (undigested(again) > 0 && System.nanoTime() < deadline) {
        Thread.sleep(100);
      }
      assertThat(undigested(again)).isZero();
      Http.Response encoded =
          Memories.of(again, token).encode("{\"text\":\"Hooli's office closes at six.\"}");
      assertThat(encoded.status()).as(encoded.text()).isEqualTo(200);
      assertThat(encoded.json().get("id").asText()).isEqualTo(id);
      assertThat(encoded.json().get("deduplicated").asBoolean()).isTrue();
    }
  }

  private static long undigested(TestServer server) {
    return server
        .engram
        .services()
        .database()
        .read(h -> h.createQuery("SELECT COUNT(*) FROM memories WHERE text_digest IS NULL")
            .mapTo(Long.class)
            .one());
  }
}
