package io.engram.finetuning;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.finetuning.trainer.LoraSettings;
import io.engram.platform.http.ApiException;
import io.engram.platform.json.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * A job's hyperparameters as asked: {@code n_epochs} (1-50), {@code batch_size} (1-256),
 * {@code learning_rate} (above 0, at most 1) or OpenAI's {@code learning_rate_multiplier} (above
 * 0, at most 10, times {@link #BASE_LEARNING_RATE}), each a number or {@code "auto"}; and the
 * adapter's shape under {@code lora} ({@code rank}, {@code alpha}, {@code dropout},
 * {@code target_modules}). A null field is auto.
 */
public record Hyperparameters(
    Integer epochs, Integer batchSize, Double learningRate, LoraSettings lora) {
  public static final double BASE_LEARNING_RATE = 1e-3;
  private static final Set<String> FIELDS =
      Set.of("n_epochs", "batch_size", "learning_rate", "learning_rate_multiplier", "lora");
  private static final Set<String> LORA_FIELDS =
      Set.of("rank", "alpha", "dropout", "target_modules");

  public static Hyperparameters parse(JsonNode node) {
    if (node == null || node.isNull() || node.isMissingNode()) {
      return new Hyperparameters(null, null, null, LoraSettings.DEFAULT);
    }
    if (!node.isObject()) {
      throw ApiException.badRequest("hyperparameters", "'hyperparameters' must be an object");
    }
    node.fieldNames().forEachRemaining(field -> {
      if (!FIELDS.contains(field)) {
        throw ApiException.badRequest(
            "hyperparameters." + field, "Unknown hyperparameter '" + field + "'; known: " + FIELDS);
      }
    });
    if (node.has("learning_rate") && node.has("learning_rate_multiplier")) {
      throw ApiException.badRequest(
          "hyperparameters.learning_rate_multiplier",
          "Send either 'learning_rate' or 'learning_rate_multiplier', not both");
    }
    Double rate = number(node, "learning_rate", 1.0);
    Double multiplier = number(node, "learning_rate_multiplier", 10.0);
    return new Hyperparameters(
        integer(node, "n_epochs", 50),
        integer(node, "batch_size", 256),
        rate != null ? rate : multiplier == null ? null : multiplier * BASE_LEARNING_RATE,
        lora(node.get("lora")));
  }

  private static Integer integer(JsonNode node, String field, int max) {
    JsonNode value = node.get(field);
    if (auto(value)) {
      return null;
    }
    if (!value.isIntegralNumber() || value.asLong() < 1 || value.asLong() > max) {
      throw ApiException.badRequest(
          "hyperparameters." + field,
          "'" + field + "' must be \"auto\" or an integer from 1 to " + max);
    }
    return value.asInt();
  }

  private static Double number(JsonNode node, String field, double max) {
    JsonNode value = node.get(field);
    if (auto(value)) {
      return null;
    }
    if (!value.isNumber() || !(value.asDouble() > 0) || value.asDouble() > max) {
      throw ApiException.badRequest(
          "hyperparameters." + field,
          "'" + field + "' must be \"auto\" or a number above 0 and at most " + max);
    }
    return value.asDouble();
  }

  private static boolean auto(JsonNode value) {
    return value == null
        || value.isNull()
        || (value.isTextual() && value.asText().equals("auto"));
  }

  private static LoraSettings lora(JsonNode node) {
    if (auto(node)) {
      return LoraSettings.DEFAULT;
    }
    if (!node.isObject()) {
      throw ApiException.badRequest("hyperparameters.lora", "'lora' must be an object");
    }
    node.fieldNames().forEachRemaining(field -> {
      if (!LORA_FIELDS.contains(field)) {
        throw ApiException.badRequest(
            "hyperparameters.lora." + field,
            "Unknown LoRA setting '" + field + "'; known: " + LORA_FIELDS);
      }
    });
    LoraSettings defaults = LoraSettings.DEFAULT;
    List<String> targets = new ArrayList<>(defaults.targets());
    JsonNode modules = node.get("target_modules");
    if (modules != null) {
      if (!modules.isArray() || modules.isEmpty()) {
        throw ApiException.badRequest(
            "hyperparameters.lora.target_modules",
            "'target_modules' must be a non-empty array of " + LoraSettings.MODULES);
      }
      targets.clear();
      modules.forEach(module -> targets.add(module.asText()));
    }
    try {
      return new LoraSettings(
          node.has("rank") ? strictInt(node.get("rank"), "rank") : defaults.rank(),
          node.has("alpha") ? strictNumber(node.get("alpha"), "alpha") : defaults.alpha(),
          node.has("dropout") ? strictNumber(node.get("dropout"), "dropout") : defaults.dropout(),
          targets);
    } catch (IllegalArgumentException e) {
      String field = e.getMessage().split(" ")[0];
      throw ApiException.badRequest(
          "hyperparameters.lora." + (field.equals("target") ? "target_modules" : field),
          e.getMessage());
    }
  }

  private static int strictInt(JsonNode value, String field) {
    if (!value.isIntegralNumber()) {
      throw new IllegalArgumentException(field + " must be an integer");
    }
    return value.asInt();
  }

  private static double strictNumber(JsonNode value, String field) {
    if (!value.isNumber()) {
      throw new IllegalArgumentException(field + " must be a number");
    }
    return value.asDouble();
  }

  /** The settings as shown on the job: numbers where known, "auto" where still to be worked out. */
  public ObjectNode view() {
    ObjectNode node = Json.MAPPER.createObjectNode();
    put(node, "n_epochs", epochs);
    put(node, "batch_size", batchSize);
    if (learningRate == null) {
      node.put("learning_rate", "auto");
      node.put("learning_rate_multiplier", "auto");
    } else {
      node.put("learning_rate", learningRate);
      node.put("learning_rate_multiplier", learningRate / BASE_LEARNING_RATE);
    }
    ObjectNode adapter = node.putObject("lora");
    adapter.put("rank", lora.rank()).put("alpha", lora.alpha()).put("dropout", lora.dropout());
    var modules = adapter.putArray("target_modules");
    lora.targets().forEach(modules::add);
    return node;
  }

  private static void put(ObjectNode node, String field, Integer value) {
    if (value == null) {
      node.put(field, "auto");
    } else {
      node.put(field, value);
    }
  }

  /** Reads the stored view back. */
  public static Hyperparameters stored(String json) {
    JsonNode node = Json.read(json, JsonNode.class);
    return new Hyperparameters(
        node.path("n_epochs").isInt() ? node.get("n_epochs").asInt() : null,
        node.path("batch_size").isInt() ? node.get("batch_size").asInt() : null,
        node.path("learning_rate").isNumber() ? node.get("learning_rate").asDouble() : null,
        lora(node.get("lora")));
  }

  /**
   * Every auto worked out for {@code examples} examples: enough epochs that the run sees about a
   * hundred examples (3 to 25), the batch size {@code defaultBatch}, the base learning rate.
   */
  public Hyperparameters resolve(int examples, int defaultBatch) {
    int resolvedEpochs =
        epochs != null ? epochs : Math.min(25, Math.max(3, (int) Math.ceil(100.0 / examples)));
    int resolvedBatch = batchSize != null ? batchSize : Math.min(defaultBatch, examples);
    double rate = learningRate != null ? learningRate : BASE_LEARNING_RATE;
    return new Hyperparameters(resolvedEpochs, resolvedBatch, rate, lora);
  }
}
