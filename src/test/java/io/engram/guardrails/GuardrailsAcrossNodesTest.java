package io.engram.guardrails;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.FakeUpstream;
import io.engram.support.Http;
import io.engram.support.PricedOrganization;
import io.engram.support.TestServer;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.Test;

/** A guardrail made, changed or removed on one node holds on another within a second or two. */
class GuardrailsAcrossNodesTest {

  @Test
  void aChangeOnOneNodeHoldsOnTheOtherWithinSeconds() throws Exception {
    try (FakeUpstream upstream = new FakeUpstream();
        TestServer first = TestServer.builder().postgres().start();
        TestServer second = TestServer.builder().sharing(first).start()) {
      PricedOrganization org = PricedOrganization.create(first, "growth", upstream);
      IntSupplier onSecond = () -> second
          .http
          .post("/v1/chat/completions")
          .bearer(org.key())
          .json("{\"model\":\"priced\",\"max_tokens\":5,\"memory\":false,\"messages\":"
              + "[{\"role\":\"user\",\"content\":\"Write to ana@example.com\"}]}")
          .send()
          .status();
      awaitStatus(onSecond, 200); // the second node follows the organization's models
      Http.Response created = org.post("/guardrails", """
          {"name":"No e-mail","applies_to":["input"],"check":{"type":"pii","entities":["email"]},
           "action":"block"}""");
      assertThat(created.status()).as(created.text()).isEqualTo(201);
      awaitStatus(onSecond, 400);
      Http.Response off = first
          .http
          .patch("/v1/organizations/" + org.id() + "/guardrails/"
              + created.json().path("id").asText())
          .bearer(org.admin())
          .json("{\"enabled\":false}")
          .send();
      assertThat(off.status()).as(off.text()).isEqualTo(200);
      awaitStatus(onSecond, 200);
    }
  }

  /** Waits up to five seconds for {@code status}; fails with the last one seen. */
  private static void awaitStatus(IntSupplier status, int expected) throws InterruptedException {
    long until = System.nanoTime() + 5_000_000_000L;
    int seen = status.getAsInt();
    while (seen != expected && System.nanoTime() < until) {
      Thread.sleep(200);
      seen = status.getAsInt();
    }
    assertThat(seen).isEqualTo(expected);
  }
}
