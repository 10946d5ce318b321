package io.engram.inference.local;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.platform.json.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Writes a tiny Llama-architecture model with random, untrained weights in the formats the local
 * engine reads (config.json, tokenizer.json with a byte-fallback BPE vocabulary and merges,
 * tokenizer_config.json with a ChatML chat template, model.safetensors in F32). No model weights
 * can be downloaded here, so tests and the demo run the real loading and generation code on this.
 * Its output is noise: it is a plumbing model, and its id says so.
 */
public final class TinyModel {
  public static final String ID = "engram-tiny-untrained";
  static final int HIDDEN = 64;
  static final int INTERMEDIATE = 128;
  static final int LAYERS = 2;
  static final int HEADS = 4;
  static final int KV_HEADS = 2;
  static final int CONTEXT = 2048;
  static final String SPACE = "\u2581";
  /**
   * The output head's scale: large enough that the model can become confident of a token (with
   * the final RMSNorm, a head of 0.05 caps the top probability near 5 %), so a fine-tuning run on
   * this model can show its loss falling and its greedy answers changing.
   */
  static final double HEAD_SCALE = 0.4;

  private static final List<String> SPECIALS =
      List.of("<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>");
  /** Words that get BPE merges, so the tokenizer does real merging rather than only characters. */
  private static final List<String> WORDS = List.of(
      "the",
      "and",
      "you",
      "that",
      "with",
      "for",
      "this",
      "have",
      "from",
      "memory",
      "hello",
      "what",
      "when",
      "where",
      "office",
      "assistant",
      "user",
      "system",
      "is",
      "are",
      "of",
      "to",
      "in",
      "it",
      "on",
      "our",
      "team",
      "year",
      "data",
      "model");

  /**
   * The model's dimensions. The default is the smallest that exercises every code path; tests of
   * memory (quantization, the KV cache) write wider or longer ones.
   */
  public record Shape(
      int hidden, int intermediate, int layers, int heads, int kvHeads, int context) {
    public static final Shape DEFAULT =
        new Shape(HIDDEN, INTERMEDIATE, LAYERS, HEADS, KV_HEADS, CONTEXT);
  }

  private TinyModel() {}

  /** Writes the model into {@code modelCacheDir/engram-tiny-untrained} (replacing it) and returns that directory. */
  public static Path write(Path modelCacheDir, long seed) {
    return write(modelCacheDir, ID, seed, Shape.DEFAULT);
  }

  /** Writes a model of this shape into {@code modelCacheDir/id} (replacing it). */
  public static Path write(Path modelCacheDir, String id, long seed, Shape shape) {
    Path dir = modelCacheDir.resolve(id);
    try {
      Files.createDirectories(dir);
      Map<String, Integer> vocab = new LinkedHashMap<>();
      List<String> merges = new ArrayList<>();
      vocabulary(vocab, merges);
      Files.writeString(dir.resolve("config.json"), Json.write(config(vocab.size(), shape)));
      Files.writeString(dir.resolve("tokenizer.json"), Json.write(tokenizer(vocab, merges)));
      Files.writeString(
          dir.resolve("tokenizer_config.json"), Json.write(tokenizerConfig(shape.context())));
      writeWeights(
          dir.resolve("model.safetensors"), vocab.size(), new SplittableRandom(seed), shape);
      return dir;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the tiny model into " + dir, e);
    }
  }

  private static void vocabulary(Map<String, Integer> vocab, List<String> merges) {
    SPECIALS.forEach(token -> vocab.put(token, vocab.size()));
    for (int b = 0; b < 256; b++) {
      vocab.put(String.format("<0x%02X>", b), vocab.size());
    }
    vocab.put(SPACE, vocab.size());
    for (char c = '!'; c <= '~'; c++) {
      vocab.putIfAbsent(String.valueOf(c), vocab.size());
    }
    for (String word : WORDS) {
      String current = SPACE;
      for (char c : word.toCharArray()) {
        String next = current + c;
        if (!vocab.containsKey(next)) {
          merges.add(current + " " + c);
          vocab.put(next, vocab.size());
        }
        current = next;
      }
    }
  }

  private static ObjectNode config(int vocabSize, Shape shape) {
    ObjectNode config = Json.MAPPER.createObjectNode();
    config.putArray("architectures").add("LlamaForCausalLM");
    config.put("model_type", "llama");
    config.put("hidden_size", shape.hidden());
    config.put("intermediate_size", shape.intermediate());
    config.put("num_attention_heads", shape.heads());
    config.put("num_key_value_heads", shape.kvHeads());
    config.put("num_hidden_layers", shape.layers());
    config.put("max_position_embeddings", shape.context());
    config.put("rms_norm_eps", 1e-5);
    config.put("vocab_size", vocabSize);
    config.put("bos_token_id", 1);
    config.putArray("eos_token_id").add(2).add(4);
    config.put("hidden_act", "silu");
    config.put("rope_theta", 10000.0);
    config.put("tie_word_embeddings", false);
    config.put("torch_dtype", "float32");
    config.put(
        "engram_note",
        "random untrained weights generated by Engram for tests and demos; output is noise");
    return config;
  }

  private static ObjectNode tokenizer(Map<String, Integer> vocab, List<String> merges) {
    ObjectNode root = Json.MAPPER.createObjectNode();
    root.put("version", "1.0");
    ArrayNode added = root.putArray("added_tokens");
    for (int i = 0; i < SPECIALS.size(); i++) {
      added
          .addObject()
          .put("id", i)
          .put("content", SPECIALS.get(i))
          .put("single_word", false)
          .put("lstrip", false)
          .put("rstrip", false)
          .put("normalized", false)
          .put("special", true);
    }
    ObjectNode normalizer = root.putObject("normalizer").put("type", "Sequence");
    ArrayNode steps = normalizer.putArray("normalizers");
    steps.addObject().put("type", "Prepend").put("prepend", SPACE);
    steps
        .addObject()
        .put("type", "Replace")
        .put("content", SPACE)
        .putObject("pattern")
        .put("String", " ");
    root.putNull("pre_tokenizer");
    ObjectNode model = root.putObject("model");
    model
        .put("type", "BPE")
        .put("unk_token", "<unk>")
        .put("fuse_unk", true)
        .put("byte_fallback", true);
    ObjectNode vocabNode = model.putObject("vocab");
    vocab.forEach(vocabNode::put);
    ArrayNode mergeNode = model.putArray("merges");
    merges.forEach(mergeNode::add);
    return root;
  }

  private static ObjectNode tokenizerConfig(int context) {
    ObjectNode config = Json.MAPPER.createObjectNode();
    config.put("bos_token", "<s>");
    config.put("eos_token", "<|im_end|>");
    config.put("unk_token", "<unk>");
    config.put("legacy", false);
    config.put("model_max_length", context);
    config.put(
        "chat_template",
        "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
            + "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}"
            + "{{ '<|im_start|>assistant\\n' }}{% endif %}");
    return config;
  }

  private static void writeWeights(Path file, int vocabSize, SplittableRandom random, Shape shape)
      throws IOException {
    Safetensors.writeF32(
        file,
        tensors(vocabSize, shape),
        (name, index) -> name.endsWith("norm.weight")
            ? 1.0f
            : (float)
                (random.nextGaussian() * (name.equals("lm_head.weight") ? HEAD_SCALE : 0.05)));
  }

  /** A Llama model's tensors and their shapes, in the order they are written. */
  public static Map<String, int[]> tensors(int vocabSize, Shape shape) {
    int hidden = shape.hidden();
    int intermediate = shape.intermediate();
    int kvWidth = shape.kvHeads() * (hidden / shape.heads());
    Map<String, int[]> shapes = new LinkedHashMap<>();
    shapes.put("model.embed_tokens.weight", new int[] {vocabSize, hidden});
    for (int layer = 0; layer < shape.layers(); layer++) {
      String base = "model.layers." + layer + ".";
      shapes.put(base + "self_attn.q_proj.weight", new int[] {hidden, hidden});
      shapes.put(base + "self_attn.k_proj.weight", new int[] {kvWidth, hidden});
      shapes.put(base + "self_attn.v_proj.weight", new int[] {kvWidth, hidden});
      shapes.put(base + "self_attn.o_proj.weight", new int[] {hidden, hidden});
      shapes.put(base + "mlp.gate_proj.weight", new int[] {intermediate, hidden});
      shapes.put(base + "mlp.up_proj.weight", new int[] {intermediate, hidden});
      shapes.put(base + "mlp.down_proj.weight", new int[] {hidden, intermediate});
      shapes.put(base + "input_layernorm.weight", new int[] {hidden});
      shapes.put(base + "post_attention_layernorm.weight", new int[] {hidden});
    }
    shapes.put("model.norm.weight", new int[] {hidden});
    shapes.put("lm_head.weight", new int[] {vocabSize, hidden});
    return shapes;
  }
}
