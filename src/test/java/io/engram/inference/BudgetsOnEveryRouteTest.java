package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.Http;
import io.engram.support.PricedOrganization;
import io.engram.support.UpstreamServerTest;
import io.engram.support.WebSocketClient;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * Every route that spends is held to the organization's budget: with a budget of one request's
 * worth, the first request of each route passes and the second is refused with budget_exceeded,
 * in that route's own error shape (chat, completions, Responses, Anthropic's messages, embeddings,
 * a conversation as an assistant, the WebSocket protocol).
 */
class BudgetsOnEveryRouteTest extends UpstreamServerTest {

  /** A new organization whose day budget is one request of {@code cost} dollars. */
  private static PricedOrganization withBudgetOf(double cost) {
    PricedOrganization org = PricedOrganization.create(server, "scale", upstream);
    org.budget("{\"scope\":\"organization\",\"period\":\"day\",\"limit\":" + cost + "}");
    return org;
  }

  private static void oncePassesThenRefused(
      double cost, Function<PricedOrganization, Http.Response> request) {
    PricedOrganization org = withBudgetOf(cost);
    Http.Response first = request.apply(org);
    assertThat(first.status()).as(first.text()).isEqualTo(200);
    Http.Response second = request.apply(org);
    assertThat(second.status()).as(second.text()).isEqualTo(429);
    assertThat(second.text()).contains("budget_exceeded");
    assertThat(second.header("Retry-After")).isNotBlank();
  }

  private static Http.Response post(PricedOrganization org, String path, String body) {
    return server.http.post(path).bearer(org.key()).json(body).send();
  }

  @Test
  void chatCompletionsAndResponses() {
    oncePassesThenRefused(PricedOrganization.REQUEST, PricedOrganization::chat);
    oncePassesThenRefused(PricedOrganization.REQUEST, org -> post(org, "/v1/completions", """
            {"model":"priced","prompt":"hello","max_tokens":5}"""));
    oncePassesThenRefused(PricedOrganization.REQUEST, org -> post(org, "/v1/responses", """
            {"model":"priced","input":"hello","max_output_tokens":5}"""));
  }

  @Test
  void anthropicsMessagesAnswerInTheirOwnErrorShape() {
    PricedOrganization org = withBudgetOf(PricedOrganization.REQUEST);
    String body = """
        {"model":"priced","max_tokens":5,"messages":[{"role":"user","content":"hello"}]}""";
    assertThat(post(org, "/v1/messages", body).status()).isEqualTo(200);
    Http.Response refused = post(org, "/v1/messages", body);
    assertThat(refused.status()).isEqualTo(429);
    assertThat(refused.json().path("type").asText()).isEqualTo("error");
    assertThat(refused.json().at("/error/message").asText()).contains("budget");
  }

  @Test
  void embeddingsAreChargedWhatTheProviderCounted() {
    oncePassesThenRefused(PricedOrganization.EMBEDDING, org -> post(org, "/v1/embeddings", """
            {"model":"embedder","input":"hello"}"""));
  }

  @Test
  void aConversationAsAnAssistant() {
    PricedOrganization org = withBudgetOf(PricedOrganization.REQUEST);
    Http.Response created = server
        .http
        .post("/api/assistants")
        .bearer(org.admin())
        .json("{\"name\":\"Desk\",\"type\":\"org_shared\"}")
        .send();
    assertThat(created.status()).as(created.text()).isEqualTo(201);
    String path =
        "/v1/assistants/" + created.json().at("/assistant/_id").asText() + "/chat/completions";
    assertThat(org.chat(org.key(), path).status()).isEqualTo(200);
    assertThat(org.chat(org.key(), path).status()).isEqualTo(429);
  }

  @Test
  void theWebSocketProtocolAnswersAnErrorFrameAndKeepsTheConnection() throws Exception {
    PricedOrganization org = withBudgetOf(PricedOrganization.REQUEST);
    String inference = """
        {"type":"inference","model":"priced","max_tokens":5,"stream":false,"memory":false,
         "messages":[{"role":"user","content":"hello"}]}""";
    try (WebSocketClient client = new WebSocketClient(server.engram.port(), "/ws", null)) {
      client.send("{\"type\":\"auth\",\"api_key\":\"" + org.key() + "\"}");
      assertThat(client.next().path("type").asText()).isEqualTo("auth_ok");
      client.send(inference);
      assertThat(client.until(f -> f.path("type").asText().equals("done"))).isNotEmpty();
      client.send(inference);
      JsonNode refused = client.next();
      assertThat(refused.path("type").asText()).isEqualTo("error");
      assertThat(refused.at("/error/code").asText()).isEqualTo("budget_exceeded");
    }
  }
}
