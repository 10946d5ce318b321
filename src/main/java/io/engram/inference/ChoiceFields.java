package io.engram.inference;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import io.engram.platform.json.Json;
import java.util.Map;

/**
 * What a chat request asks of the model's choices beyond one text: {@code n} (several choices),
 * {@code logprobs} and {@code top_logprobs} (log probabilities of the chosen and the likeliest
 * tokens), {@code logit_bias} (token ids pushed up or down). Checked for OpenAI's ranges and kept
 * as sent, for an engine that carries them to its model; the defaults (n 1, logprobs false, an
 * empty bias) ask nothing and are kept out, so every engine takes them.
 */
final class ChoiceFields {
  /** OpenAI's bounds. */
  static final int MAX_CHOICES = 128;

  static final int MAX_TOP_LOGPROBS = 20;
  static final int MAX_BIASED_TOKENS = 300;

  private ChoiceFields() {}

  /** The request's choice fields, or null when it asks only the defaults. */
  static ObjectNode parse(JsonBody body) {
    ObjectNode asked = Json.MAPPER.createObjectNode();
    int n = body.optionalInt("n", 1, MAX_CHOICES).orElse(1);
    if (n > 1) {
      asked.put("n", n);
    }
    boolean logprobs = body.optionalBoolean("logprobs").orElse(false);
    if (logprobs) {
      asked.put("logprobs", true);
    }
    body.optionalInt("top_logprobs", 0, MAX_TOP_LOGPROBS).ifPresent(top -> {
      if (!logprobs) {
        throw ApiException.badRequest("top_logprobs", "'top_logprobs' needs 'logprobs': true");
      }
      asked.put("top_logprobs", top);
    });
    JsonNode bias = body.get("logit_bias");
    if (bias != null && !(bias.isObject() && bias.isEmpty())) {
      asked.set("logit_bias", bias(bias));
    }
    return asked.isEmpty() ? null : asked;
  }

  /** OpenAI's form: token ids (as strings) to a bias from -100 to 100. */
  private static JsonNode bias(JsonNode bias) {
    if (!bias.isObject() || bias.size() > MAX_BIASED_TOKENS) {
      throw ApiException.badRequest(
          "logit_bias",
          "'logit_bias' must be an object of at most " + MAX_BIASED_TOKENS
              + " token ids, each mapped to a number from -100 to 100");
    }
    for (Map.Entry<String, JsonNode> entry : bias.properties()) {
      JsonNode value = entry.getValue();
      if (!entry.getKey().matches("[0-9]{1,9}")
          || !value.isNumber()
          || value.asDouble() < -100
          || value.asDouble() > 100) {
        throw ApiException.badRequest(
            "logit_bias",
            "'logit_bias' maps token ids (digits) to a number from -100 to 100; '" + entry.getKey()
                + "' does not");
      }
    }
    return bias;
  }
}
