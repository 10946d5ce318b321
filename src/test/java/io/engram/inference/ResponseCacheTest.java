package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.FakeUpstream;
import io.engram.support.Http;
import io.engram.support.PricedOrganization;
import io.engram.support.UpstreamServerTest;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The response cache through real HTTP: off until the organization turns it on; a repeated request
 * (fields in any order) is answered from it without calling the model, streamed or not, at no cost;
 * the request chooses with X-Engram-Cache; an answer never outlives the memory it stood on, its
 * time to live, or its organization; an answer too large is not kept and costs the client nothing.
 */
class ResponseCacheTest extends UpstreamServerTest {

  /** An organization with the cache on (an answer lives a minute), and a token for everything. */
  private static PricedOrganization cached() {
    PricedOrganization org = PricedOrganization.create(server, "growth", upstream);
    org.configure("{\"cache\":{\"enabled\":true,\"ttl_seconds\":60}}");
    return org;
  }

  private static Http.Response ask(
      PricedOrganization org, String credential, String body, String mode) {
    Http.Call call = server.http.post("/v1/chat/completions").bearer(credential).json(body);
    return (mode == null ? call : call.header("X-Engram-Cache", mode)).send();
  }

  private static String body(String question) {
    return "{\"model\":\"priced\",\"max_tokens\":5,\"temperature\":0,"
        + "\"messages\":[{\"role\":\"user\",\"content\":\"" + question + "\"}]}";
  }

  @Test
  void aRepeatedRequestIsAnsweredFromTheCacheWithoutTheModelAndAtNoCost() {
    PricedOrganization org = cached();
    int before = upstream.requests().size();
    Http.Response first = ask(org, org.key(), body("What is two and two?"), null);
    assertThat(first.status()).as(first.text()).isEqualTo(200);
    assertThat(first.header("X-Engram-Cache")).isEqualTo("miss");
    // The same request with its fields in another order is the same request.
    Http.Response again = ask(org, org.key(), """
        {"messages":[{"content":"What is two and two?","role":"user"}],"temperature":0,
         "model":"priced","max_tokens":5}""", null);
    assertThat(again.status()).isEqualTo(200);
    assertThat(again.header("X-Engram-Cache")).isEqualTo("hit");
    assertThat(again.json().at("/choices/0/message/content").asText())
        .isEqualTo(first.json().at("/choices/0/message/content").asText());
    // Streamed, the kept answer is replayed as a stream.
    Http.Response streamed = ask(
        org,
        org.key(),
        body("What is two and two?").replace("\"max_tokens\"", "\"stream\":true,\"max_tokens\""),
        null);
    assertThat(streamed.header("X-Engram-Cache")).isEqualTo("hit");
    assertThat(streamed.text()).contains("Hello from the upstream.", "data: [DONE]");
    assertThat(upstream.requests().size()).isEqualTo(before + 1);

    // off leaves the cache out; refresh asks the model again and keeps its answer.
    Http.Response off = ask(org, org.key(), body("What is two and two?"), "off");
    assertThat(off.header("X-Engram-Cache")).isNull();
    Http.Response refresh = ask(org, org.key(), body("What is two and two?"), "refresh");
    assertThat(refresh.header("X-Engram-Cache")).isEqualTo("miss");
    assertThat(upstream.requests().size()).isEqualTo(before + 3);
    Http.Response bad = ask(org, org.key(), body("What is two and two?"), "sometimes");
    assertThat(bad.status()).isEqualTo(400);
    assertThat(bad.json().at("/error/param").asText()).isEqualTo("X-Engram-Cache");

    // The hits are counted, and cost nothing.
    JsonNode usage = server
        .http
        .get("/v1/organizations/" + org.id() + "/usage")
        .bearer(org.admin())
        .send()
        .json();
    assertThat(usage.at("/totals/cache_hits").asLong()).isEqualTo(2);
    assertThat(usage.at("/totals/requests").asLong()).isEqualTo(5);
    assertThat(usage.at("/totals/cost_usd").asDouble())
        .isCloseTo(3 * PricedOrganization.REQUEST, within(1e-12));
  }

  @Test
  void theCacheIsOffUntilTheOrganizationTurnsItOnAndNeverSharedBetweenOrganizations() {
    PricedOrganization plain = PricedOrganization.create(server, "growth", upstream);
    int before = upstream.requests().size();
    assertThat(ask(plain, plain.key(), body("Is it on?"), null).header("X-Engram-Cache"))
        .isNull();
    assertThat(ask(plain, plain.key(), body("Is it on?"), "on").header("X-Engram-Cache"))
        .isNull();
    assertThat(upstream.requests().size()).isEqualTo(before + 2);

    PricedOrganization one = cached();
    PricedOrganization other = cached();
    assertThat(ask(one, one.key(), body("Whose answer?"), null).header("X-Engram-Cache"))
        .isEqualTo("miss");
    assertThat(ask(other, other.key(), body("Whose answer?"), null).header("X-Engram-Cache"))
        .isEqualTo("miss");
  }

  @Test
  void anAnswerDoesNotOutliveTheMemoryItStoodOnNorItsTimeToLive() {
    PricedOrganization org = cached();
    String token = server.tokenWithEveryScope(org.id());
    String fridge = org.remember(token, "The office wifi password is on the fridge.");
    String question = body("Where is the office wifi password?");
    Http.Response first = ask(org, token, question, null);
    assertThat(first.header("X-Engram-Cache")).isEqualTo("miss");
    assertThat(first.header("X-Engram-Memory-Ids")).contains(fridge);
    assertThat(ask(org, token, question, null).header("X-Engram-Cache")).isEqualTo("hit");

    assertThat(server
            .http
            .post("/v1/memory/" + fridge + "/suppress")
            .bearer(token)
            .json("{}")
            .send()
            .status())
        .isEqualTo(200);
    Http.Response afterSuppression = ask(org, token, question, null);
    assertThat(afterSuppression.header("X-Engram-Cache")).isEqualTo("miss");
    assertThat(afterSuppression.header("X-Engram-Memory-Ids")).doesNotContain(fridge);

    String desk = org.remember(token, "The spare office keys are in the top desk drawer.");
    String keys = body("Where are the spare office keys?");
    assertThat(ask(org, token, keys, null).header("X-Engram-Memory-Ids")).contains(desk);
    assertThat(ask(org, token, keys, null).header("X-Engram-Cache")).isEqualTo("hit");
    // An edit the memory block does not show (its metadata) is a new version all the same.
    Http.Response edited = server
        .http
        .patch("/v1/memory/" + desk)
        .bearer(token)
        .body("application/merge-patch+json", "{\"metadata\":{\"room\":\"2.14\"}}")
        .send();
    assertThat(edited.status()).as(edited.text()).isEqualTo(200);
    assertThat(ask(org, token, keys, null).header("X-Engram-Cache")).isEqualTo("miss");
    assertThat(ask(org, token, keys, null).header("X-Engram-Cache")).isEqualTo("hit");
    assertThat(server.http.delete("/v1/memory/" + desk).bearer(token).send().status())
        .isEqualTo(200);
    assertThat(ask(org, token, keys, null).header("X-Engram-Cache")).isEqualTo("miss");

    // Kept a minute: after it, the model is asked again.
    assertThat(ask(org, token, keys, null).header("X-Engram-Cache")).isEqualTo("hit");
    server.clock.advance(Duration.ofSeconds(61));
    assertThat(ask(org, token, keys, null).header("X-Engram-Cache")).isEqualTo("miss");
  }

  @Test
  void anAnswerLargerThanTheBoundIsNotKeptAndTheClientGetsItAllTheSame() {
    PricedOrganization org = cached();
    String large = "x".repeat(300_000);
    upstream.script(FakeUpstream.Script.NORMAL.pieces(large));
    Http.Response first = ask(org, org.key(), body("Say a lot"), null);
    assertThat(first.status()).isEqualTo(200);
    assertThat(first.json().at("/choices/0/message/content").asText()).isEqualTo(large);
    Http.Response second = ask(org, org.key(), body("Say a lot"), null);
    assertThat(second.status()).isEqualTo(200);
    assertThat(second.header("X-Engram-Cache")).isEqualTo("miss");
  }
}
