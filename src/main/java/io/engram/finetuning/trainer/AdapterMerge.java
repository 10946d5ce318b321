package io.engram.finetuning.trainer;

import io.engram.inference.local.Safetensors;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Stream;

/**
 * A servable model from a base model and a LoRA adapter: every targeted projection becomes W +
 * (alpha / r) B A, written in F32 next to copies of the base model's configuration and tokenizer
 * files. The local engine then serves it like any model, at the base model's speed.
 */
public final class AdapterMerge {
  private AdapterMerge() {}

  public static void write(Path baseModel, Path adapter, Path target) throws IOException {
    Files.createDirectories(target);
    try (Stream<Path> files = Files.list(baseModel)) {
      for (Path file : files.filter(Files::isRegularFile).toList()) {
        String name = file.getFileName().toString();
        if (!name.endsWith(".safetensors") && !name.endsWith(".index.json")) {
          Files.copy(file, target.resolve(name), StandardCopyOption.REPLACE_EXISTING);
        }
      }
    }
    PeftAdapter.Matrices matrices = PeftAdapter.read(adapter);
    float scale = matrices.lora().scale();
    int rank = matrices.lora().rank();
    Safetensors.Reader weights = Safetensors.open(baseModel.resolve("model.safetensors"));
    Map<String, int[]> shapes = new LinkedHashMap<>();
    for (String name : weights.names()) {
      shapes.put(name, weights.shape(name));
    }
    // tensors are written one after another: one is kept in memory at a time
    String[] current = {null};
    float[][] values = {null};
    Safetensors.writeF32(target.resolve("model.safetensors"), shapes, (name, index) -> {
      if (!name.equals(current[0])) {
        current[0] = name;
        values[0] = merged(weights, name, matrices, rank, scale);
      }
      return values[0][(int) index];
    });
  }

  private static float[] merged(
      Safetensors.Reader weights,
      String name,
      PeftAdapter.Matrices matrices,
      int rank,
      float scale) {
    try {
      float[] w = weights.floats(name);
      String module = name.endsWith(".weight") ? name.substring(0, name.length() - 7) : name;
      float[][] ab = matrices.byModule().get(module);
      if (ab == null) {
        return w;
      }
      int[] shape = weights.shape(name);
      int out = shape[0];
      int in = shape[1];
      float[] a = ab[0];
      float[] b = ab[1];
      for (int o = 0; o < out; o++) {
        for (int k = 0; k < rank; k++) {
          float bk = b[o * rank + k] * scale;
          if (bk == 0) {
            continue;
          }
          int row = o * in;
          int aRow = k * in;
          for (int i = 0; i < in; i++) {
            w[row + i] += bk * a[aRow + i];
          }
        }
      }
      return w;
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
