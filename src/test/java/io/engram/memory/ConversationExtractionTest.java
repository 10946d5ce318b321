package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.Http;
import io.engram.support.TestServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** POST /v1/memory/extract: a conversation in, the statements that last remembered. */
class ConversationExtractionTest {
  private static TestServer server;
  private static Memories memories;

  private static final String CONVERSATION = "{\"messages\":["
      + "{\"role\":\"user\",\"content\":\"Hi there! Can you help me plan the launch?\"},"
      + "{\"role\":\"assistant\",\"content\":\"Of course. I prefer to start with the date.\"},"
      + "{\"role\":\"user\",\"content\":\"Our fiscal year starts in April. I prefer email over "
      + "phone calls. We decided to launch in Lyon first. From now on, always quote prices in "
      + "euros. Thanks\"},"
      + "{\"role\":\"user\",\"content\":\"Remember that the warehouse code is 4471.\"}]}";

  @BeforeAll
  static void start() {
    server = TestServer.start();
    memories = Memories.ofNewOrganization(server);
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  @Test
  void theStatementsThatLastAreRememberedWithTheirKinds() {
    Http.Response dry = memories.send(
        "POST", "/extract", CONVERSATION.replace("{\"messages\"", "{\"dryRun\":true,\"messages\""));
    assertThat(dry.status()).as(dry.text()).isEqualTo(200);
    assertThat(dry.json().get("memories")).isEmpty();
    JsonNode proposals = dry.json().get("proposals");
    assertThat(proposals.findValuesAsText("text"))
        .containsExactly(
            "Our fiscal year starts in April.",
            "I prefer email over phone calls.",
            "We decided to launch in Lyon first.",
            "From now on, always quote prices in euros.",
            "The warehouse code is 4471.");
    assertThat(proposals.findValuesAsText("memoryKind"))
        .containsExactly("fact", "preference", "event", "instruction", "fact");
    assertThat(memories.send("GET", "", null).json().get("data")).isEmpty();

    Http.Response written = memories.send("POST", "/extract", CONVERSATION);
    assertThat(written.status()).isEqualTo(201);
    assertThat(written.json().get("memories")).hasSize(5);
    assertThat(memories.ids("When does the fiscal year start?", 3))
        .contains(written.json().at("/memories/0/id").asText());

    // Said again, nothing new: each is already held.
    Http.Response again = memories.send("POST", "/extract", CONVERSATION);
    assertThat(again.json().get("memories")).isEmpty();
    assertThat(again.json().get("known")).hasSize(5);
  }

  @Test
  void badConversationsAreRefused() {
    assertThat(memories.send("POST", "/extract", "{\"messages\":[]}").status()).isEqualTo(400);
    Http.Response noContent =
        memories.send("POST", "/extract", "{\"messages\":[{\"role\":\"user\"}]}");
    assertThat(noContent.status()).isEqualTo(400);
    assertThat(noContent.json().at("/error/param").asText()).isEqualTo("messages[0]");
    assertThat(memories
            .send(
                "POST",
                "/extract",
                "{\"messages\":[{\"role\":\"user\",\"content\":" + "\"x\"}],\"mode\":\"llm\"}")
            .status())
        .isEqualTo(400);
  }
}
