package io.engram.finetuning.trainer;

import ai.djl.ndarray.NDArray;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.inference.local.Safetensors;
import io.engram.platform.json.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A LoRA adapter in Hugging Face PEFT's layout, so other tools load it unchanged:
 * {@code adapter_config.json} (peft_type LORA, r, lora_alpha, lora_dropout, target_modules) and
 * {@code adapter_model.safetensors} with tensors named
 * {@code base_model.model.model.layers.N.self_attn.q_proj.lora_A.weight} (r x in) and
 * {@code ...lora_B.weight} (out x r).
 */
public final class PeftAdapter {
  public static final String CONFIG = "adapter_config.json";
  public static final String WEIGHTS = "adapter_model.safetensors";
  static final String PREFIX = "base_model.model.";

  /** The adapter's matrices by module name ({@code model.layers.N.self_attn.q_proj}), as floats. */
  public record Matrices(LoraSettings lora, Map<String, float[][]> byModule) {}

  private PeftAdapter() {}

  public static void write(Path dir, LoraLlama model, String baseModel) throws IOException {
    Files.createDirectories(dir);
    Map<String, int[]> shapes = new LinkedHashMap<>();
    Map<String, float[]> values = new LinkedHashMap<>();
    for (var entry : model.adapters().entrySet()) {
      put(
          shapes,
          values,
          PREFIX + entry.getKey() + ".lora_A.weight",
          entry.getValue().a());
      put(
          shapes,
          values,
          PREFIX + entry.getKey() + ".lora_B.weight",
          entry.getValue().b());
    }
    Safetensors.writeF32(
        dir.resolve(WEIGHTS), shapes, (name, index) -> values.get(name)[(int) index]);
    Files.writeString(dir.resolve(CONFIG), Json.write(config(model.lora(), baseModel)));
  }

  private static void put(
      Map<String, int[]> shapes, Map<String, float[]> values, String name, NDArray array) {
    long[] dims = array.getShape().getShape();
    shapes.put(name, new int[] {(int) dims[0], (int) dims[1]});
    values.put(name, array.toType(ai.djl.ndarray.types.DataType.FLOAT32, false).toFloatArray());
  }

  static ObjectNode config(LoraSettings lora, String baseModel) {
    ObjectNode config = Json.MAPPER.createObjectNode();
    config.put("peft_type", "LORA");
    config.put("task_type", "CAUSAL_LM");
    config.put("base_model_name_or_path", baseModel);
    config.put("r", lora.rank());
    config.put("lora_alpha", lora.alpha());
    config.put("lora_dropout", lora.dropout());
    var targets = config.putArray("target_modules");
    lora.targets().forEach(targets::add);
    config.put("bias", "none");
    config.put("fan_in_fan_out", false);
    config.put("inference_mode", true);
    config.put("init_lora_weights", true);
    config.putNull("modules_to_save");
    config.put("use_rslora", false);
    config.put("use_dora", false);
    return config;
  }

  /** Reads an adapter back: its settings and, per module, {A, B} flattened row-major. */
  public static Matrices read(Path dir) throws IOException {
    JsonNode config = Json.MAPPER.readTree(dir.resolve(CONFIG).toFile());
    List<String> targets = new ArrayList<>();
    config.path("target_modules").forEach(node -> targets.add(node.asText()));
    LoraSettings lora = new LoraSettings(
        config.path("r").asInt(),
        config.path("lora_alpha").asDouble(),
        config.path("lora_dropout").asDouble(),
        targets);
    Safetensors.Reader weights = Safetensors.open(dir.resolve(WEIGHTS));
    Map<String, float[][]> byModule = new LinkedHashMap<>();
    for (String name : weights.names()) {
      if (name.endsWith(".lora_A.weight")) {
        String module = name.substring(PREFIX.length(), name.length() - ".lora_A.weight".length());
        String b = PREFIX + module + ".lora_B.weight";
        byModule.put(module, new float[][] {weights.floats(name), weights.floats(b)});
      }
    }
    return new Matrices(lora, byModule);
  }

  /** Sets a model's adapters to the ones saved (a checkpoint being resumed). */
  public static void load(Path dir, LoraLlama model) throws IOException {
    Matrices saved = read(dir);
    for (var entry : model.adapters().entrySet()) {
      float[][] ab = saved.byModule().get(entry.getKey());
      if (ab == null) {
        throw new IOException("the checkpoint has no adapter for " + entry.getKey());
      }
      set(entry.getValue().a(), ab[0]);
      set(entry.getValue().b(), ab[1]);
    }
  }

  /** Writes values into the array's own memory (in place, so the optimizer's references hold). */
  static void set(NDArray array, float[] values) {
    try (NDArray source = LoraLlama.owned(array.getManager().create(values, array.getShape()));
        NDArray typed = source.toType(array.getDataType(), true)) {
      array.muli(0).addi(typed);
    }
  }
}
