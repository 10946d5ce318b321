package io.engram.finetuning.trainer;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Set;

/**
 * The dimensions of a Llama-architecture model, from its config.json: what the trainer needs to
 * build the same forward pass the local engine runs.
 */
public record LlamaShape(
    int hidden,
    int intermediate,
    int layers,
    int heads,
    int kvHeads,
    int vocab,
    int context,
    double rmsEps,
    double ropeTheta,
    boolean tiedEmbeddings) {

  /** The model types whose weights and forward pass are Llama's (no projection biases). */
  public static final Set<String> TRAINABLE_TYPES = Set.of("llama", "mistral");

  /** Why a model cannot be trained here. */
  public static final class UnsupportedModelException extends IOException {
    public UnsupportedModelException(String message) {
      super(message);
    }
  }

  public static LlamaShape read(Path modelDir) throws IOException {
    JsonNode config = Json.MAPPER.readTree(modelDir.resolve("config.json").toFile());
    String type = config.path("model_type").asText();
    if (!TRAINABLE_TYPES.contains(type)) {
      throw new UnsupportedModelException("the trainer trains Llama-architecture models "
          + TRAINABLE_TYPES + "; this model's type is '" + type + "'");
    }
    if (config.has("rope_scaling") && !config.path("rope_scaling").isNull()) {
      throw new UnsupportedModelException("models with rope_scaling are not trained here");
    }
    int heads = required(config, "num_attention_heads");
    return new LlamaShape(
        required(config, "hidden_size"),
        required(config, "intermediate_size"),
        required(config, "num_hidden_layers"),
        heads,
        config.path("num_key_value_heads").asInt(heads),
        required(config, "vocab_size"),
        required(config, "max_position_embeddings"),
        config.path("rms_norm_eps").asDouble(1e-6),
        config.path("rope_theta").asDouble(10000.0),
        config.path("tie_word_embeddings").asBoolean(false));
  }

  private static int required(JsonNode config, String field) throws UnsupportedModelException {
    JsonNode value = config.path(field);
    if (!value.canConvertToInt() || value.asInt() <= 0) {
      throw new UnsupportedModelException("config.json has no positive " + field);
    }
    return value.asInt();
  }

  public int headDim() {
    return hidden / heads;
  }

  /** Output and input sizes of a projection a LoRA adapter may target. */
  public int[] projection(String module) {
    int kv = kvHeads * headDim();
    return switch (module) {
      case "q_proj", "o_proj" -> new int[] {hidden, hidden};
      case "k_proj", "v_proj" -> new int[] {kv, hidden};
      case "gate_proj", "up_proj" -> new int[] {intermediate, hidden};
      case "down_proj" -> new int[] {hidden, intermediate};
      default -> throw new IllegalArgumentException("unknown module " + module);
    };
  }

  /** The module's path under a layer: self_attn for the attention projections, mlp for the rest. */
  public static String block(String module) {
    return module.endsWith("_proj")
            && !module.startsWith("gate")
            && !module.startsWith("up")
            && !module.startsWith("down")
        ? "self_attn"
        : "mlp";
  }
}
