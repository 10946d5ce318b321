package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.TestServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
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
      double textsBefore = server.metric("engram_embedding_texts_total", "");
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
      double calls = server.metric("engram_embedding_calls_total", "");
      double texts = server.metric("engram_embedding_texts_total", "");
      assertThat(texts - textsBefore).isGreaterThanOrEqualTo(rounds * TOPICS.length);
      assertThat(calls).isPositive().isLessThanOrEqualTo(texts);
    }
  }
}
