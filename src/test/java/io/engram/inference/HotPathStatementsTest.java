package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.Http;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * The hot path's guard (issue 43): what a chat makes the database do while the client waits, read
 * from {@code /metrics} as an operator would. With memory off, nothing: the credential, the
 * organization's settings and limits come from caches, and usage and history are written later in
 * batches; a feature that adds one lookup to every chat fails here. With memory on, nothing either
 * once the candidates' rows were read: retrieval keeps them, and its uses are written in batches.
 */
@Isolated // counts the whole JVM's threads, descriptors or database statements
class HotPathStatementsTest {
  @RegisterExtension
  static final GatewayFixture gateway = new GatewayFixture("seed", Map.of());

  private static final Pattern ON_REQUESTS =
      Pattern.compile("(?m)^engram_database_statements_total\\{during=\"request\"[^}]*} (\\S+)$");

  private static final int CHATS = 40;

  @BeforeAll
  static void remember() {
    for (String text : List.of(
        "The Lisbon showroom opens at ten on weekdays and at noon on Saturdays.",
        "The showroom manager is Inês Duarte.",
        "Showroom visitors park in the garage under the building.")) {
      gateway.remember(text, null);
    }
  }

  @Test
  void aChatWithMemoryOffRunsNoStatementWhileTheClientWaits() {
    chats(3, "off"); // the first chats fill the caches
    long before = onRequests();
    long started = System.nanoTime();
    chats(CHATS, "off");
    // The credential's cache is renewed every two seconds (its row and its organization's): two
    // statements per renewal that falls within the chats, whatever their number.
    long renewals = 1 + (System.nanoTime() - started) / 2_000_000_000L;
    assertThat(onRequests() - before).isLessThanOrEqualTo(2 * renewals);
  }

  @Test
  void aChatWithMemoryOnWhoseCandidatesWereReadRunsNoStatementWhileTheClientWaits() {
    chats(3, "on"); // the first chats read the candidates' rows, which retrieval then keeps
    long before = onRequests();
    long started = System.nanoTime();
    chats(CHATS, "on");
    long renewals = 1 + (System.nanoTime() - started) / 2_000_000_000L;
    System.out.println(
        "statements per memory-on chat: " + (onRequests() - before) / (double) CHATS);
    assertThat(onRequests() - before).isLessThanOrEqualTo(2 * renewals);
  }

  private static void chats(int count, String memory) {
    for (int i = 0; i < count; i++) {
      Http.Response response = gateway
          .chat(
              gateway.key,
              GatewayFixture.body("When does the Lisbon showroom open on day " + i + "?", ""))
          .header("X-Engram-Memory", memory)
          .send();
      assertThat(response.status()).as(response.text()).isEqualTo(200);
      if (memory.equals("on")) {
        assertThat(response.header("X-Engram-Memory-Ids")).isNotEmpty();
      }
    }
  }

  private static long onRequests() {
    String metrics =
        gateway.server.asOperator(gateway.server.http.get("/metrics")).text();
    Matcher count = ON_REQUESTS.matcher(metrics);
    assertThat(count.find()).as("engram_database_statements_total in /metrics").isTrue();
    return (long) Double.parseDouble(count.group(1));
  }
}
