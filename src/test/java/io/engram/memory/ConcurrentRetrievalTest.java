package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.TestServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Many questions at once over HTTP: each gets its own answer (questions that shared a call to the
 * model are not mixed up), and /metrics counts the model's calls and the texts they read.
 */
class ConcurrentRetrievalTest {
  private static final String[] TOPICS = {
    "invoices in euros", "single sign-on", "the mobile app", "on-site training",
    "the audit log", "weekly status calls", "the staging environment", "two-factor authentication"
  };

  @Test
  void concurrentQuestionsEachFindTheirOwnMemory() throws Exception {
    try (TestServer server = TestServer.start()) {
      String org = server.createOrganization("growth");
      Memories memories =
          Memories.of(server, server.token(org, null, "memory:read", "memory:write"));
      List<String> ids = new ArrayList<>();
      for (String topic : TOPICS) {
        ids.add(memories.remember("The customer asked about " + topic, Map.of()));
      }
      double textsBefore = metric(server, "engram_embedding_texts_total");
      int rounds = 6;
      try (ExecutorService askers = Executors.newFixedThreadPool(16)) {
        List<Future<List<String>>> answers = new ArrayList<>();
        for (int i = 0; i < rounds * TOPICS.length; i++) {
          String topic = TOPICS[i % TOPICS.length];
          answers.add(askers.submit(() -> memories.ids("What about " + topic + "?", 1)));
        }
        for (int i = 0; i < answers.size(); i++) {
          assertThat(answers.get(i).get()).containsExactly(ids.get(i % TOPICS.length));
        }
      }
      double calls = metric(server, "engram_embedding_calls_total");
      double texts = metric(server, "engram_embedding_texts_total");
      assertThat(texts - textsBefore).isGreaterThanOrEqualTo(rounds * TOPICS.length);
      assertThat(calls).isPositive().isLessThanOrEqualTo(texts);
    }
  }

  private static double metric(TestServer server, String name) {
    String text =
        server.http.get("/metrics").bearer(TestServer.ADMIN_KEY).send().text();
    Matcher value = Pattern.compile("(?m)^" + Pattern.quote(name) + "(?:\\{[^}]*})? (\\S+)$")
        .matcher(text);
    assertThat(value.find()).as(name + " in /metrics").isTrue();
    return Double.parseDouble(value.group(1));
  }
}
