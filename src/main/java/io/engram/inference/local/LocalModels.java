package io.engram.inference.local;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
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
  static final long MAX_HEADER = 100L * 1024 * 1024;

  /** A servable model directory and what its files say about it. */
  public record Found(String id, Path directory, int contextLength, long parameters, long createdEpochSeconds) {
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

  private LocalModels() {
  }

  public static List<Found> scan(Path modelCacheDir) {
    if (!Files.isDirectory(modelCacheDir)) {
      return List.of();
    }
    List<Found> found = new ArrayList<>();
    try (Stream<Path> dirs = Files.list(modelCacheDir)) {
      dirs.filter(Files::isDirectory).sorted().forEach(dir -> inspect(dir).ifPresent(found::add));
    } catch (IOException e) {
      LOG.warn("cannot list the model directory {}: {}", modelCacheDir, e.toString());
    }
    return found;
  }

  /** The model in one directory, when it has every file the local engine needs and they read. */
  public static Optional<Found> inspect(Path dir) {
    Path config = dir.resolve("config.json");
    Path weights = dir.resolve("model.safetensors");
    if (!Files.isRegularFile(config) || !Files.isRegularFile(dir.resolve("tokenizer.json"))
        || !Files.isRegularFile(weights)) {
      return Optional.empty();
    }
    try {
      JsonNode json = Json.MAPPER.readTree(config.toFile());
      int context = json.path("max_position_embeddings").asInt(0);
      if (context <= 0 || !json.path("model_type").isTextual()) {
        LOG.warn("skipping model {}: config.json needs model_type and max_position_embeddings", dir.getFileName());
        return Optional.empty();
      }
      return Optional.of(new Found(dir.getFileName().toString(), dir, context, parameters(weights),
          Files.getLastModifiedTime(config).toInstant().getEpochSecond()));
    } catch (IOException | RuntimeException e) {
      LOG.warn("skipping model {}: {}", dir.getFileName(), e.toString());
      return Optional.empty();
    }
  }

  /** Sums the tensors' sizes from the safetensors header (without reading the weights). */
  static long parameters(Path weights) throws IOException {
    try (InputStream in = Files.newInputStream(weights)) {
      byte[] prefix = in.readNBytes(8);
      if (prefix.length != 8) {
        throw new IOException("model.safetensors is too short");
      }
      long length = ByteBuffer.wrap(prefix).order(ByteOrder.LITTLE_ENDIAN).getLong();
      if (length <= 0 || length > MAX_HEADER) {
        throw new IOException("model.safetensors has an invalid header length " + length);
      }
      JsonNode header = Json.MAPPER.readTree(in.readNBytes((int) length));
      long total = 0;
      for (var entry : header.properties()) {
        if (entry.getKey().equals("__metadata__")) {
          continue;
        }
        long count = 1;
        for (JsonNode dim : entry.getValue().path("shape")) {
          count *= dim.asLong();
        }
        total += count;
      }
      return total;
    }
  }
}
