package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.Http;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code POST /v1/messages} through real HTTP (the official SDK's run is
 * AnthropicClientCompatibilityTest): the shapes the contract documents, Anthropic's error shape,
 * and what has no equal in a chat refused by name.
 */
class MessagesApiTest {
  @RegisterExtension
  static final GatewayFixture gateway = GatewayFixture.start();

  private Http.Response messages(String credential, String json) {
    return gateway
        .server
        .http
        .post("/v1/messages")
        .header("x-api-key", credential)
        .header("anthropic-version", "2023-06-01")
        .json(json)
        .send();
  }

  @Test
  void aMessageRunsAsAChatOnTheModel() {
    Http.Response answer = messages(gateway.key, """
        {"model":"engram-chat","max_tokens":40,"system":[{"type":"text","text":"Be brief."}],
         "messages":[{"role":"user","content":[{"type":"text","text":"Hello"}]}],
         "stop_sequences":["END"],"metadata":{"user_id":"u-7"}}""");
    assertThat(answer.status()).as(answer.text()).isEqualTo(200);
    assertThat(answer.json().path("type").asText()).isEqualTo("message");
    assertThat(answer.json().at("/content/0/text").asText()).isEqualTo("Hello from the upstream.");
    assertThat(answer.json().path("stop_reason").asText()).isEqualTo("end_turn");
    var sent = gateway.upstream.lastRequest();
    assertThat(sent.at("/messages/0/role").asText()).isEqualTo("system");
    assertThat(sent.at("/messages/0/content").asText()).isEqualTo("Be brief.");
    assertThat(sent.path("max_tokens").asInt()).isEqualTo(40);
    assertThat(sent.at("/stop/0").asText()).isEqualTo("END");
    assertThat(sent.path("user").asText()).isEqualTo("u-7");
  }

  @Test
  void errorsAreInAnthropicsShape() {
    Http.Response missing = messages(
        gateway.key,
        "{\"model\":\"engram-chat\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
    assertThat(missing.status()).isEqualTo(400);
    assertThat(missing.json().path("type").asText()).isEqualTo("error");
    assertThat(missing.json().at("/error/type").asText()).isEqualTo("invalid_request_error");
    assertThat(missing.json().at("/error/param").asText()).isEqualTo("max_tokens");
    Http.Response unknown = messages("engk_nope", "{}");
    assertThat(unknown.status()).isEqualTo(401);
    assertThat(unknown.json().at("/error/type").asText()).isEqualTo("authentication_error");
    for (String[] refused : new String[][] {
      {"\"top_k\":5,", "top_k"},
      {"\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":1024},", "thinking"},
      // Types the schema refuses are refused by name, as on the other routes.
      {"\"stop_sequences\":\"x\",", "stop_sequences"},
      {"\"stop_sequences\":[7],", "stop_sequences"},
      {"\"metadata\":\"x\",", "metadata"},
      {"\"metadata\":7,", "metadata"},
      {"\"metadata\":[\"u\"],", "metadata"},
      {"\"metadata\":{\"user_id\":7},", "metadata.user_id"},
    }) {
      Http.Response answer = messages(
          gateway.key,
          "{" + refused[0]
              + "\"model\":\"engram-chat\",\"max_tokens\":8,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
      assertThat(answer.status()).as(refused[0]).isEqualTo(400);
      assertThat(answer.json().at("/error/param").asText()).isEqualTo(refused[1]);
    }
    // Malformed tools and tool choices are 400s naming the field, never a 500.
    for (String bad : new String[] {
      "\"tools\":[\"weather\"],",
      "\"tools\":[{\"name\":7}],",
      "\"tool_choice\":\"auto\",",
      "\"metadata\":\"x\",\"tools\":{},"
    }) {
      Http.Response answer = messages(
          gateway.key,
          "{" + bad
              + "\"model\":\"engram-chat\",\"max_tokens\":8,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
      assertThat(answer.status()).as(bad + answer.text()).isEqualTo(400);
      assertThat(answer.json().at("/error/type").asText()).isEqualTo("invalid_request_error");
    }
    Http.Response document = messages(gateway.key, """
        {"model":"engram-chat","max_tokens":8,"messages":[{"role":"user","content":[
          {"type":"document","source":{"type":"text","media_type":"text/plain","data":"x"}}]}]}""");
    assertThat(document.status()).isEqualTo(400);
    assertThat(document.json().at("/error/param").asText()).isEqualTo("messages[0].content[0]");
    Http.Response image = messages(gateway.key, """
        {"model":"engram-chat","max_tokens":8,"messages":[{"role":"user","content":[
          {"type":"text","text":"What is this?"},
          {"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA=="}}]}]}""");
    assertThat(image.status()).as(image.text()).isEqualTo(200);
    assertThat(gateway
            .upstream
            .lastRequest()
            .at("/messages/0/content/1/image_url/url")
            .asText())
        .isEqualTo("data:image/png;base64,AA==");
  }

  @Test
  void aStreamIsAnthropicsNamedEvents() {
    Http.Response stream = messages(gateway.key, """
        {"model":"engram-chat","max_tokens":40,"stream":true,
         "messages":[{"role":"user","content":"Hello"}]}""");
    assertThat(stream.status()).isEqualTo(200);
    assertThat(stream.text())
        .contains(
            "event: message_start",
            "event: content_block_start",
            "event: content_block_delta",
            "\"text_delta\"",
            "event: content_block_stop",
            "event: message_delta",
            "event: message_stop",
            "\"end_turn\"");
  }
}
