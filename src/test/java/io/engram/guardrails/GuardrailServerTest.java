package io.engram.guardrails;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.platform.json.Json;
import io.engram.support.FakeUpstream;
import io.engram.support.Http;
import io.engram.support.PricedOrganization;
import io.engram.support.TestServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;

/**
 * What the guardrails' tests through real HTTP share: a server, a fake upstream that records what
 * it received (answering normally again after each test that scripts it), a chat of one user
 * message, and a guardrail made as the organization's admin.
 */
abstract class GuardrailServerTest {
  static FakeUpstream upstream;
  static TestServer server;

  @BeforeAll
  static void start() {
    upstream = new FakeUpstream();
    server = TestServer.builder().env("RATE_LIMIT_REQUESTS", "1000000").start();
  }

  @AfterAll
  static void stop() {
    server.close();
    upstream.close();
  }

  @AfterEach
  void answerNormally() {
    upstream.script(FakeUpstream.Script.NORMAL);
  }

  /** A chat completion of one user message on the priced model, memory off. */
  static Http.Response chat(PricedOrganization org, String text, boolean stream) {
    return server
        .http
        .post("/v1/chat/completions")
        .bearer(org.key())
        .json("{\"model\":\"priced\",\"memory\":false,\"stream\":" + stream + ",\"messages\":"
            + "[{\"role\":\"user\",\"content\":" + Json.write(text) + "}]}")
        .send();
  }

  /** A guardrail made (201); its id. */
  static String created(PricedOrganization org, String body) {
    Http.Response created = org.post("/guardrails", body);
    assertThat(created.status()).as(created.text()).isEqualTo(201);
    return created.json().path("id").asText();
  }
}
