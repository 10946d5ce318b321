package io.engram.inference.models;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.engram.inference.local.LocalModels;
import io.engram.inference.local.SafetensorsHeader;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.MultipartReader;
import io.engram.platform.json.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * The {@code POST /v1/models} form and the checks on what it brings, before any engine reads it:
 * the parts (the spec's file, config, model_id and model_type; the tokenizer the local engine
 * needs in its own part, or inside one of those: {@link UploadedTokenizer}), the id, the model type jlama runs, config.json, tokenizer.json and the safetensors
 * header. Each failure is a 400 naming the part at fault.
 */
final class UploadedModelCheck {
  static final String WEIGHTS = "file";
  static final String CONFIG = "config";
  static final String TOKENIZER = "tokenizer";
  static final String TOKENIZER_CONFIG = "tokenizer_config";
  static final String MODEL_ID = "model_id";
  static final String MODEL_TYPE = "model_type";

  /** A file part: where it is stored in the model directory and the most it may hold. */
  private record FilePart(String fileName, long maxBytes) {}

  private static final Map<String, FilePart> FILES = Map.of(
      WEIGHTS, new FilePart("model.safetensors", Long.MAX_VALUE),
      CONFIG, new FilePart("config.json", 1024 * 1024),
      TOKENIZER, new FilePart("tokenizer.json", 64L * 1024 * 1024),
      TOKENIZER_CONFIG, new FilePart("tokenizer_config.json", 16L * 1024 * 1024));
  /** The longest context accepted (1 Mi tokens): the engine precomputes tables of this length. */
  static final int MAX_CONTEXT = 1 << 20;
  /** The largest rotary-position table (context x head size floats, 1 GiB) the engine may precompute. */
  static final long MAX_POSITION_TABLE = 1L << 28;

  /** The spec's parts; the tokenizer may come in its own part or inside one of these. */
  private static final Set<String> REQUIRED = Set.of(WEIGHTS, CONFIG, MODEL_ID, MODEL_TYPE);
  /** Every part the form takes, sorted for messages. */
  private static final Set<String> PARTS =
      new TreeSet<>(Set.of(WEIGHTS, CONFIG, TOKENIZER, TOKENIZER_CONFIG, MODEL_ID, MODEL_TYPE));

  /** The form's fields, once every part has arrived. */
  record Received(String modelId, String modelType) {}

  private UploadedModelCheck() {}

  /**
   * Reads the form into {@code dir}. The id is checked (and handed to {@code idCheck}, which
   * refuses a taken one) as soon as its part arrives, so a taken id fails before the weights
   * are sent in full when the client puts model_id first.
   */
  static Received receive(MultipartReader form, Path dir, Consumer<String> idCheck) {
    Set<String> seen = new HashSet<>();
    String modelId = null;
    String modelType = null;
    try {
      for (Optional<MultipartReader.Part> next = form.next();
          next.isPresent();
          next = form.next()) {
        String name = next.get().name();
        if (!seen.add(name)) {
          throw ApiException.badRequest(name, "The part '" + name + "' is sent twice");
        }
        FilePart file = FILES.get(name);
        if (file != null) {
          ModelUploads.copy(
              form.content(),
              dir.resolve(file.fileName()),
              file.maxBytes(),
              () -> ApiException.badRequest(
                  name, "'" + name + "' is larger than " + file.maxBytes() + " bytes"));
        } else if (name.equals(MODEL_ID)) {
          modelId = modelId(form.text(MODEL_ID, 256));
          idCheck.accept(modelId);
        } else if (name.equals(MODEL_TYPE)) {
          modelType = modelType(form.text(MODEL_TYPE, 64));
        } else {
          throw ApiException.badRequest(
              name, "Unknown part '" + name + "'; the parts are: " + String.join(", ", PARTS));
        }
      }
    } catch (IOException e) {
      throw ApiException.badRequest(null, "The upload could not be read: " + e.getMessage());
    }
    for (String required : new TreeSet<>(REQUIRED)) {
      if (!seen.contains(required)) {
        throw ApiException.badRequest(required, "The part '" + required + "' is required");
      }
    }
    UploadedTokenizer.complete(dir, seen.contains(TOKENIZER));
    return new Received(modelId, modelType);
  }

  private static String modelId(String value) {
    String id = value.trim();
    if (!ModelUploads.MODEL_ID.matcher(id).matches()) {
      throw ApiException.badRequest(
          MODEL_ID,
          "'model_id' must be 1 to 128 letters, digits, '.', '_' or '-', "
              + "starting with a letter or digit");
    }
    return id;
  }

  private static String modelType(String value) {
    String type = value.trim();
    if (!LocalModels.CAUSAL_TYPES.contains(type)) {
      throw ApiException.badRequest(
          MODEL_TYPE,
          "'model_type' must be one of "
              + String.join(", ", new TreeSet<>(LocalModels.CAUSAL_TYPES))
              + " (causal language models the local "
              + "engine runs)");
    }
    return type;
  }

  /** Checks the stored files: config.json against model_type, tokenizer.json, the safetensors header. */
  static void verify(Path dir, String modelType) {
    JsonNode config = jsonObject(dir.resolve("config.json"), CONFIG);
    if (!modelType.equals(config.path("model_type").asText(null))) {
      throw ApiException.badRequest(
          CONFIG,
          "config.json's model_type is " + config.path("model_type") + "; the form says '"
              + modelType + "'");
    }
    int context = LocalModels.contextLength(config);
    if (context <= 0 || context > MAX_CONTEXT) {
      throw ApiException.badRequest(
          CONFIG,
          "config.json needs a max_position_embeddings (the context) between 1 " + "and "
              + MAX_CONTEXT);
    }
    int vocabulary = positive(config, "vocab_size");
    int hidden = positive(config, config.has("n_embd") ? "n_embd" : "hidden_size");
    int heads = positive(config, config.has("n_head") ? "n_head" : "num_attention_heads");
    if (hidden % heads != 0 || (long) context * (hidden / heads) > MAX_POSITION_TABLE) {
      throw ApiException.badRequest(
          CONFIG,
          "config.json's heads must divide its hidden size, and context x head "
              + "size must stay within " + MAX_POSITION_TABLE);
    }
    if (!jsonObject(dir.resolve("tokenizer.json"), TOKENIZER).path("model").isObject()) {
      throw ApiException.badRequest(
          TOKENIZER, "tokenizer.json has no 'model' object (a Hugging Face tokenizer)");
    }
    if (Files.exists(dir.resolve("tokenizer_config.json"))) {
      jsonObject(dir.resolve("tokenizer_config.json"), TOKENIZER_CONFIG);
    }
    try {
      // The engine sizes its buffers from config.json: a config that does not describe these
      // weights could make it allocate without bound, so its dimensions must match a tensor.
      SafetensorsHeader weights = SafetensorsHeader.read(dir.resolve("model.safetensors"));
      if (!weights.hasShape(vocabulary, hidden)) {
        throw ApiException.badRequest(
            CONFIG,
            "config.json does not describe these weights: no [vocab_size, " + "hidden_size] = ["
                + vocabulary + ", " + hidden + "] embedding tensor in 'file'");
      }
    } catch (SafetensorsHeader.InvalidException e) {
      throw ApiException.badRequest(
          WEIGHTS, "'file' is not a valid safetensors file: " + e.getMessage());
    } catch (IOException e) {
      throw ModelUploads.storageFailure(e);
    }
  }

  private static int positive(JsonNode config, String field) {
    JsonNode value = config.path(field);
    if (!value.canConvertToInt() || value.asInt() <= 0) {
      throw ApiException.badRequest(CONFIG, "config.json needs a positive " + field);
    }
    return value.asInt();
  }

  private static JsonNode jsonObject(Path file, String part) {
    try {
      JsonNode node = Json.MAPPER.readTree(file.toFile());
      if (node == null || !node.isObject()) {
        throw ApiException.badRequest(part, "'" + part + "' must be a JSON object");
      }
      return node;
    } catch (JsonProcessingException e) {
      throw ApiException.badRequest(
          part, "'" + part + "' is not valid JSON: " + e.getOriginalMessage());
    } catch (IOException e) {
      throw ModelUploads.storageFailure(e);
    }
  }
}
