package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.Http;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Conversation history: each exchange the gateway answers, whole or streamed, is kept in the
 * organization's default instance (the client's messages, not the memory block; the answer, model
 * and usage), listable, readable and deletable there, counted in conversation_history_gb; an
 * organization that turns CONVERSATION_HISTORY off keeps nothing.
 */
class ConversationHistoryTest {
  static final GatewayFixture gateway = GatewayFixture.start();

  @AfterAll
  static void stop() {
    gateway.close();
  }

  private static String instanceOf(String org) {
    return gateway
        .server
        .asOperator(gateway.server.http.get("/v1/organizations/" + org + "/instances"))
        .json()
        .at("/data/0/id")
        .asText();
  }

  private static String instance() {
    return instanceOf(gateway.orgId);
  }

  private static JsonNode page(String query) {
    Http.Response list = gateway.server.asOperator(
        gateway.server.http.get("/v1/nano/" + instance() + "/conversations" + query));
    assertThat(list.status()).as(list.text()).isEqualTo(200);
    return list.json();
  }

  @Test
  void everyAnsweredExchangeIsKeptInTheDefaultInstance() {
    gateway.remember("Acme's renewal is due in March", null);
    Http.Response whole = gateway
        .chat(gateway.key, GatewayFixture.body("When is Acme's renewal due?", ""))
        .send();
    assertThat(whole.status()).as(whole.text()).isEqualTo(200);
    Http.Response streamed = gateway
        .chat(gateway.token, GatewayFixture.body("And who owns the account?", "\"stream\":true"))
        .send();
    assertThat(streamed.status()).isEqualTo(200);
    gateway.server.engram.inference().flushUsage();

    JsonNode list = page("?limit=1");
    assertThat(list.get("data")).hasSize(1);
    assertThat(list.get("has_more").asBoolean()).isTrue();
    JsonNode newest = list.get("data").get(0);
    assertThat(newest.get("model").asText()).isEqualTo(GatewayFixture.MODEL);
    assertThat(newest.has("messages")).isFalse();
    JsonNode older = page("?before=" + list.get("next").asText()).get("data").get(0);

    JsonNode exchange = gateway
        .server
        .asOperator(gateway.server.http.get(
            "/v1/nano/" + instance() + "/conversations/" + older.get("id").asText()))
        .json();
    assertThat(exchange.get("messages")).hasSize(1);
    assertThat(exchange.at("/messages/0/content").asText())
        .isEqualTo("When is Acme's renewal due?");
    assertThat(exchange.get("answer").asText())
        .isEqualTo(whole.json().at("/choices/0/message/content").asText());
    assertThat(exchange.at("/usage/memory_tokens").asInt()).isPositive();
    assertThat(exchange.at("/usage/completion_tokens").asInt()).isPositive();
    assertThat(exchange.get("request_id").asText()).isEqualTo(whole.header("X-Request-Id"));
    assertThat(exchange.get("bytes").asLong()).isPositive();

    JsonNode usage = gateway
        .server
        .asOperator(gateway.server.http.get("/v1/organizations/" + gateway.orgId + "/storage"))
        .json();
    assertThat(usage.get("conversation_history_gb").decimalValue().signum()).isPositive();

    String id = older.get("id").asText();
    assertThat(gateway
            .server
            .asOperator(
                gateway.server.http.delete("/v1/nano/" + instance() + "/conversations/" + id))
            .status())
        .isEqualTo(204);
    assertThat(gateway
            .server
            .asOperator(gateway.server.http.get("/v1/nano/" + instance() + "/conversations/" + id))
            .status())
        .isEqualTo(404);
  }

  @Test
  void anOrganizationThatTurnsItOffKeepsNothing() {
    String org = gateway.server.createOrganization("seed");
    assertThat(gateway
            .server
            .asOperator(gateway
                .server
                .http
                .post("/v1/organizations/" + org + "/env")
                .json("{\"variables\":{\"CONVERSATION_HISTORY\":\"false\"}}"))
            .status())
        .isEqualTo(200);
    String key = gateway.server.apiKey(org, 1000, "inference");
    assertThat(gateway.chat(key, GatewayFixture.body("Hello", "")).send().status())
        .isEqualTo(200);
    gateway.server.engram.inference().flushUsage();
    String nano = instanceOf(org);
    assertThat(gateway
            .server
            .asOperator(gateway.server.http.get("/v1/nano/" + nano + "/conversations"))
            .json()
            .get("data"))
        .isEmpty();
    assertThat(gateway
            .server
            .asOperator(gateway
                .server
                .http
                .post("/v1/organizations/" + org + "/env")
                .json("{\"variables\":{\"CONVERSATION_HISTORY\":\"sometimes\"}}"))
            .status())
        .isEqualTo(400);
  }

  @Test
  void retentionKeepsTheLatestExchanges() {
    String org = gateway.server.createOrganization("seed");
    String key = gateway.server.apiKey(org, 1000, "inference");
    for (int i = 0; i < 3; i++) {
      assertThat(
              gateway.chat(key, GatewayFixture.body("Question " + i, "")).send().status())
          .isEqualTo(200);
    }
    gateway.server.engram.inference().flushUsage();
    assertThat(gateway
            .server
            .asOperator(gateway
                .server
                .http
                .post("/v1/organizations/" + org + "/retention")
                .json("{\"policies\":[{\"type\":\"conversation_history\",\"keep_latest\":1}]}"))
            .status())
        .isEqualTo(200);
    JsonNode run = gateway
        .server
        .asOperator(gateway.server.http.post("/v1/organizations/" + org + "/retention/run"))
        .json();
    assertThat(run.get("deleted")).hasSize(2);
    String nano = instanceOf(org);
    JsonNode left = gateway
        .server
        .asOperator(gateway.server.http.get("/v1/nano/" + nano + "/conversations"))
        .json()
        .get("data");
    assertThat(left).hasSize(1);
    JsonNode kept = gateway
        .server
        .asOperator(gateway.server.http.get(
            "/v1/nano/" + nano + "/conversations/" + left.get(0).get("id").asText()))
        .json();
    assertThat(kept.at("/messages/0/content").asText()).isEqualTo("Question 2");
  }
}
