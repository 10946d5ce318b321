package io.engram.inference.local;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The model directories under MODEL_CACHE_DIR that the local engine can serve: each directory
 * with config.json, tokenizer.json and model.safetensors is a model whose id is the directory's
 * name. Anything else there (the embedding runtime's files, a half-copied model) is skipped.
 */
public final class LocalModels {
  private static final Logger LOG = LoggerFactory.getLogger(LocalModels.class);

  /** A servable model directory and what its files say about it. */
  public record Found(
      String id,
      Path directory,
      int contextLength,
      long parameters,
      long createdEpochSeconds,
      long kvBytesPerToken) {
    /** The parameter count as people write it: "22M", "1.2B". */
    public String parametersLabel() {
      if (parameters >= 1_000_000_000L) {
        return String.format(Locale.ROOT, "%.1fB", parameters / 1e9);
      }
      if (parameters >= 1_000_000L) {
        return String.format(Locale.ROOT, "%.1fM", parameters / 1e6);
      }
      return String.format(Locale.ROOT, "%.1fK", parameters / 1e3);
    }
  }

  /** The config.json model types jlama generates with (its causal language models). */
  public static final Set<String> CAUSAL_TYPES =
      Set.of("llama", "mistral", "mixtral", "qwen2", "gemma", "gemma2", "granite", "gpt2");

  private LocalModels() {}

  /** The model's context from config.json: max_position_embeddings, or GPT-2's n_positions; 0 when absent. */
  public static int contextLength(JsonNode config) {
    JsonNode context = config.has("max_position_embeddings")
        ? config.path("max_position_embeddings")
        : config.path("n_positions");
    return context.canConvertToInt() ? context.asInt() : 0;
  }

  /**
   * The weight files: model.safetensors, or the files model.safetensors.index.json names (a model
   * in several files); none when neither is whole.
   */
  private static List<Path> weightFiles(Path dir) {
    Path single = dir.resolve("model.safetensors");
    if (Files.isRegularFile(single)) {
      return List.of(single);
    }
    Path index = dir.resolve("model.safetensors.index.json");
    if (!Files.isRegularFile(index)) {
      return List.of();
    }
    try {
      java.util.TreeSet<String> names = new java.util.TreeSet<>();
      Json.MAPPER.readTree(index.toFile()).path("weight_map").forEach(f -> names.add(f.asText()));
      List<Path> files = new ArrayList<>();
      for (String name : names) {
        Path file = dir.resolve(name).normalize();
        if (!file.getParent().equals(dir.normalize()) || !Files.isRegularFile(file)) {
          return List.of();
        }
        files.add(file);
      }
      return files;
    } catch (IOException | RuntimeException e) {
      return List.of();
    }
  }

  /**
   * The KV cache one token takes while generating: a key and a value per layer and key-value head,
   * in the engine's F32 working memory (jlama keeps its cache in the working type). 0 when
   * config.json does not say.
   */
  public static long kvBytesPerToken(JsonNode config) {
    int layers = firstInt(config, "num_hidden_layers", "n_layer");
    int heads = firstInt(config, "num_attention_heads", "n_head");
    int kvHeads = firstInt(config, "num_key_value_heads");
    int hidden = firstInt(config, "hidden_size", "n_embd");
    int headDim = firstInt(config, "head_dim");
    if (headDim == 0 && heads > 0) {
      headDim = hidden / heads;
    }
    return 2L * layers * (kvHeads > 0 ? kvHeads : heads) * headDim * Float.BYTES;
  }

  private static int firstInt(JsonNode config, String... names) {
    for (String name : names) {
      if (config.path(name).canConvertToInt()) {
        return config.path(name).asInt();
      }
    }
    return 0;
  }

  public static List<Found> scan(Path modelCacheDir) {
    if (!Files.isDirectory(modelCacheDir)) {
      return List.of();
    }
    List<Found> found = new ArrayList<>();
    for (Path dir : directories(modelCacheDir)) {
      String name = dir.getFileName().toString();
      Optional<Found> model = inspect(dir, name);
      if (model.isPresent()) {
        found.add(model.get());
        continue;
      }
      // owner/name, as a Hugging Face repository is laid out (and as MODEL_AUTO_DOWNLOAD puts it)
      for (Path inner : directories(dir)) {
        inspect(inner, name + "/" + inner.getFileName()).ifPresent(found::add);
      }
    }
    return found;
  }

  /** The directories in {@code dir}, sorted, without hidden ones (uploads, downloads under way). */
  private static List<Path> directories(Path dir) {
    try (Stream<Path> dirs = Files.list(dir)) {
      return dirs.filter(Files::isDirectory)
          .filter(path -> !path.getFileName().toString().startsWith("."))
          .sorted()
          .toList();
    } catch (IOException e) {
      LOG.warn("cannot list the model directory {}: {}", dir, e.toString());
      return List.of();
    }
  }

  /** The model in one directory, when it has every file the local engine needs and they read. */
  public static Optional<Found> inspect(Path dir) {
    return inspect(dir, dir.getFileName().toString());
  }

  /** The same, served as {@code id}. */
  public static Optional<Found> inspect(Path dir, String id) {
    Path config = dir.resolve("config.json");
    List<Path> weights = weightFiles(dir);
    if (!Files.isRegularFile(config)
        || !Files.isRegularFile(dir.resolve("tokenizer.json"))
        || weights.isEmpty()) {
      return Optional.empty();
    }
    try {
      JsonNode json = Json.MAPPER.readTree(config.toFile());
      int context = contextLength(json);
      if (context <= 0 || !json.path("model_type").isTextual()) {
        LOG.warn(
            "skipping model {}: config.json needs model_type and max_position_embeddings",
            dir.getFileName());
        return Optional.empty();
      }
      long parameters = 0;
      for (Path file : weights) {
        parameters += SafetensorsHeader.read(file).parameters();
      }
      return Optional.of(new Found(
          id,
          dir,
          context,
          parameters,
          Files.getLastModifiedTime(config).toInstant().getEpochSecond(),
          kvBytesPerToken(json)));
    } catch (IOException | RuntimeException e) {
      LOG.warn("skipping model {}: {}", dir.getFileName(), e.toString());
      return Optional.empty();
    }
  }
}
