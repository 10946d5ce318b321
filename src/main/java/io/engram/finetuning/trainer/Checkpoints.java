package io.engram.finetuning.trainer;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.types.DataType;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.inference.local.Safetensors;
import io.engram.platform.io.DirectorySize;
import io.engram.platform.io.DirectoryTree;
import io.engram.platform.json.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * A job's checkpoints in one directory: {@code step-N/} holds the adapter in PEFT layout, the
 * optimizer's moments and {@code trainer_state.json}. A checkpoint is written under a temporary
 * name and renamed when complete, so a kill -9 leaves either the whole checkpoint or none, and a
 * resumed job starts from the newest complete one. The newest {@link #KEPT} are kept.
 */
public final class Checkpoints {
  static final int KEPT = 3;
  private static final String STATE = "trainer_state.json";
  private static final String OPTIMIZER = "optimizer.safetensors";

  private final Path dir;

  /** A checkpoint on disk. */
  public record Saved(int step, Path dir, long bytes) {}

  /** Where a run starts: step 0, or a checkpoint's step with what it had counted. */
  public record Resumed(int step, long trainedTokens, double firstLoss) {}

  public Checkpoints(Path dir) {
    this.dir = dir;
  }

  public Saved save(
      LoraLlama model,
      AdamW optimizer,
      String baseModelId,
      int step,
      long trainedTokens,
      double firstLoss)
      throws IOException {
    Files.createDirectories(dir);
    Path partial = dir.resolve(".partial-step-" + step);
    DirectoryTree.delete(partial);
    PeftAdapter.write(partial, model, baseModelId);
    List<NDArray> moments = optimizer.moments();
    Map<String, int[]> shapes = new LinkedHashMap<>();
    Map<String, float[]> values = new LinkedHashMap<>();
    for (int i = 0; i < moments.size(); i++) {
      NDArray moment = moments.get(i);
      long[] dims = moment.getShape().getShape();
      shapes.put("moment." + i, new int[] {(int) dims[0], (int) dims[1]});
      values.put("moment." + i, moment.toType(DataType.FLOAT32, false).toFloatArray());
    }
    Safetensors.writeF32(
        partial.resolve(OPTIMIZER), shapes, (name, index) -> values.get(name)[(int) index]);
    ObjectNode state = Json.MAPPER
        .createObjectNode()
        .put("step", step)
        .put("optimizer_steps", optimizer.steps())
        .put("trained_tokens", trainedTokens)
        .put("first_loss", firstLoss);
    Files.writeString(partial.resolve(STATE), Json.write(state));
    Path complete = dir.resolve("step-" + step);
    DirectoryTree.delete(complete);
    Files.move(partial, complete, StandardCopyOption.ATOMIC_MOVE);
    prune();
    return new Saved(step, complete, DirectorySize.of(complete));
  }

  /** Loads the newest complete checkpoint into the model and optimizer, if there is one. */
  public Resumed resume(LoraLlama model, AdamW optimizer) throws IOException {
    Optional<Path> latest = latest();
    if (latest.isEmpty()) {
      return new Resumed(0, 0, Double.NaN);
    }
    Path checkpoint = latest.get();
    PeftAdapter.load(checkpoint, model);
    Safetensors.Reader saved = Safetensors.open(checkpoint.resolve(OPTIMIZER));
    List<NDArray> moments = optimizer.moments();
    for (int i = 0; i < moments.size(); i++) {
      PeftAdapter.set(moments.get(i), saved.floats("moment." + i));
    }
    JsonNode state = Json.MAPPER.readTree(checkpoint.resolve(STATE).toFile());
    optimizer.resumeAt(state.path("optimizer_steps").asInt());
    return new Resumed(
        state.path("step").asInt(),
        state.path("trained_tokens").asLong(),
        state.path("first_loss").asDouble(Double.NaN));
  }

  /** The newest complete checkpoint's directory. */
  public Optional<Path> latest() throws IOException {
    return complete().max(Comparator.comparingInt(Checkpoints::stepOf));
  }

  private Stream<Path> complete() throws IOException {
    if (!Files.isDirectory(dir)) {
      return Stream.empty();
    }
    try (Stream<Path> entries = Files.list(dir)) {
      return entries
          .filter(path -> path.getFileName().toString().matches("step-\\d+"))
          .filter(path -> Files.isRegularFile(path.resolve(STATE)))
          .toList()
          .stream();
    }
  }

  private void prune() throws IOException {
    List<Path> all = complete()
        .sorted(Comparator.comparingInt(Checkpoints::stepOf).reversed())
        .toList();
    for (Path old : all.subList(Math.min(KEPT, all.size()), all.size())) {
      DirectoryTree.delete(old);
    }
  }

  static int stepOf(Path checkpoint) {
    return Integer.parseInt(checkpoint.getFileName().toString().substring("step-".length()));
  }
}
