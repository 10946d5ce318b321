package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import io.engram.support.Http;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What agent frameworks ask of the choices: {@code n}, {@code logprobs}, {@code top_logprobs} and
 * {@code logit_bias} reach the upstream as sent, and every choice comes back in OpenAI's exact
 * shape, whole and streamed (the fake upstream answers them as OpenAI does).
 */
class ChoicesTest {
  @RegisterExtension
  static final GatewayFixture gateway = GatewayFixture.start();

  private static String body(String extra) {
    return "{\"model\":\"" + GatewayFixture.MODEL + "\",\"messages\":[{\"role\":\"user\","
        + "\"content\":\"Hi\"}],\"memory\":false," + extra + "}";
  }

  @Test
  void severalChoicesWithLogprobsComeBackWhole() {
    Http.Response response = gateway
        .chat(
            gateway.token,
            body("\"n\":2,\"logprobs\":true,\"top_logprobs\":2,\"logit_bias\":{\"42\":-100}"))
        .send();
    assertThat(response.status()).as(response.text()).isEqualTo(200);
    JsonNode sent = gateway.upstream.lastRequest();
    assertThat(sent.get("n").asInt()).isEqualTo(2);
    assertThat(sent.get("logprobs").asBoolean()).isTrue();
    assertThat(sent.get("top_logprobs").asInt()).isEqualTo(2);
    assertThat(sent.at("/logit_bias/42").asInt()).isEqualTo(-100);

    JsonNode choices = response.json().get("choices");
    assertThat(choices).hasSize(2);
    assertThat(choices.at("/0/index").asInt()).isZero();
    assertThat(choices.at("/0/message/content").asText()).isEqualTo("Hello from the upstream.");
    assertThat(choices.at("/1/index").asInt()).isEqualTo(1);
    assertThat(choices.at("/1/message/content").asText()).isEqualTo("Answer 2.");
    assertThat(choices.at("/1/message/role").asText()).isEqualTo("assistant");
    assertThat(choices.at("/1/finish_reason").asText()).isEqualTo("stop");
    JsonNode first = choices.at("/0/logprobs/content/0");
    assertThat(first.get("token").asText()).isEqualTo("Hello");
    assertThat(first.get("logprob").asDouble()).isEqualTo(-0.1);
    assertThat(first.get("bytes")).hasSize(5);
    assertThat(first.get("top_logprobs")).hasSize(2);
    assertThat(choices.at("/0/logprobs/content")).hasSize(5);
    assertThat(response.json().at("/usage/completion_tokens").asInt()).isEqualTo(8);
  }

  @Test
  void severalChoicesStreamAsOpenAiInterleavesThem() {
    Http.Response response = gateway
        .chat(
            gateway.token,
            body("\"n\":3,\"logprobs\":true,\"stream\":true,"
                + "\"stream_options\":{\"include_usage\":true}"))
        .send();
    assertThat(response.status()).isEqualTo(200);
    List<String> events = GatewayFixture.events(response.text());
    assertThat(events.getLast()).isEqualTo("[DONE]");
    Map<Integer, StringBuilder> texts = new HashMap<>();
    Map<Integer, String> finishes = new HashMap<>();
    Map<Integer, Integer> logprobs = new HashMap<>();
    String id = null;
    for (String event : events.subList(0, events.size() - 2)) {
      JsonNode chunk = Json.read(event, JsonNode.class);
      assertThat(chunk.get("object").asText()).isEqualTo("chat.completion.chunk");
      id = id == null ? chunk.get("id").asText() : id;
      assertThat(chunk.get("id").asText()).isEqualTo(id);
      assertThat(chunk.get("choices")).hasSize(1);
      JsonNode choice = chunk.at("/choices/0");
      int index = choice.get("index").asInt();
      texts
          .computeIfAbsent(index, i -> new StringBuilder())
          .append(choice.at("/delta/content").asText(""));
      if (choice.hasNonNull("finish_reason")) {
        finishes.put(index, choice.get("finish_reason").asText());
      }
      if (choice.at("/logprobs/content").isArray()) {
        logprobs.merge(index, choice.at("/logprobs/content").size(), Integer::sum);
      }
    }
    assertThat(texts.get(0).toString()).isEqualTo("Hello from the upstream.");
    assertThat(texts.get(1).toString()).isEqualTo("Answer 2.");
    assertThat(texts.get(2).toString()).isEqualTo("Answer 3.");
    assertThat(finishes).containsOnlyKeys(0, 1, 2).containsValue("stop");
    assertThat(logprobs).containsEntry(0, 5).containsEntry(1, 3).containsEntry(2, 3);
    JsonNode usage = Json.read(events.get(events.size() - 2), JsonNode.class);
    assertThat(usage.get("choices")).isEmpty();
    assertThat(usage.at("/usage/completion_tokens").asInt()).isEqualTo(11);
  }

  @Test
  void theDefaultsAskNothingOfTheUpstream() {
    Http.Response response = gateway
        .chat(gateway.token, body("\"n\":1,\"logprobs\":false,\"logit_bias\":{}"))
        .send();
    assertThat(response.status()).isEqualTo(200);
    JsonNode sent = gateway.upstream.lastRequest();
    assertThat(sent.has("n")).isFalse();
    assertThat(sent.has("logprobs")).isFalse();
    assertThat(sent.has("logit_bias")).isFalse();
    assertThat(response.json().get("choices")).hasSize(1);
    assertThat(response.json().at("/choices/0/logprobs").isNull()).isTrue();
  }
}
