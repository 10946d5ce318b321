package io.engram.finetuning.trainer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.training.GradientCollector;
import com.github.tjake.jlama.model.AbstractModel;
import com.github.tjake.jlama.model.ModelSupport;
import com.github.tjake.jlama.safetensors.DType;
import com.github.tjake.jlama.tensor.AbstractTensor;
import com.github.tjake.jlama.tensor.KvBufferCache;
import io.engram.inference.local.TinyModel;
import java.lang.reflect.Field;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The trainer's forward pass is the local engine's (same probabilities for the same tokens), and
 * its backward pass is right: PyTorch's gradients of the adapters agree with finite differences.
 */
class LoraLlamaTest {
  @TempDir
  static Path models;

  static Path tiny;
  static Engine engine;

  @BeforeAll
  static void setUp() {
    tiny = TinyModel.write(models, 7);
    engine = TorchRuntime.engine(TorchRuntime.defaultCacheDir());
  }

  @Test
  void forwardGivesTheLocalEnginesProbabilities() throws Exception {
    int[] tokens = {1, 300, 301, 40, 50, 60, 70};
    LoraSettings lora = new LoraSettings(4, 8, 0, List.of("q_proj", "v_proj"));
    float[] ours;
    try (NDManager manager = engine.newBaseManager();
        LoraLlama model = LoraLlama.load(tiny, lora, 1, manager, DataType.FLOAT32)) {
      NDArray logits = model.logits(new int[][] {tokens}, null);
      ours = logits.get("0, -1, :").softmax(-1).toFloatArray();
    }
    float[] theirs = jlamaProbabilities(tokens);
    assertThat(ours).hasSameSizeAs(theirs);
    for (int i = 0; i < ours.length; i++) {
      assertThat(ours[i]).as("probability of token %d", i).isCloseTo(theirs[i], within(2e-4f));
    }
  }

  private static float[] jlamaProbabilities(int[] tokens) throws Exception {
    AbstractModel m = ModelSupport.loadModel(tiny.toFile(), DType.F32, DType.F32);
    Field cacheField = AbstractModel.class.getDeclaredField("kvBufferCache");
    cacheField.setAccessible(true);
    try (KvBufferCache.KvBuffer kv = ((KvBufferCache) cacheField.get(m)).getEphemeralKvBuffer()) {
      AbstractTensor last = null;
      for (int position = 0; position < tokens.length; position++) {
        if (last != null) {
          last.close();
        }
        last = m.forward(tokens[position], position, kv, Optional.empty());
      }
      return m.getLogits(last);
    } finally {
      m.close();
    }
  }

  @Test
  void adapterGradientsMatchFiniteDifferences() throws Exception {
    LoraSettings lora = new LoraSettings(
        2, 4, 0, List.of("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "down_proj"));
    TokenBatch batch = new TokenBatch(
        new int[][] {{1, 300, 301, 40, 50}, {1, 70, 80, 90, 0}},
        new float[][] {{0, 1, 1, 1, 0}, {0, 0, 1, 0, 0}});
    try (NDManager manager = engine.newBaseManager();
        LoraLlama model = LoraLlama.load(tiny, lora, 3, manager, DataType.FLOAT64)) {
      // B starts at zero, which makes A's gradient zero: move B off zero first
      SplittableRandom random = new SplittableRandom(5);
      for (LoraLlama.Adapter adapter : model.adapters().values()) {
        NDArray b = adapter.b();
        double[] values = new double[(int) b.size()];
        for (int i = 0; i < values.length; i++) {
          values[i] = random.nextGaussian() * 0.1;
        }
        b.set(java.nio.DoubleBuffer.wrap(values));
      }
      TorchRuntime.GRADIENTS.lock();
      try (GradientCollector collector = engine.newGradientCollector()) {
        collector.backward(model.loss(batch, null));
      } finally {
        TorchRuntime.GRADIENTS.unlock();
      }
      int checked = 0;
      for (var entry : model.adapters().entrySet()) {
        for (NDArray parameter : List.of(entry.getValue().a(), entry.getValue().b())) {
          double[] gradient = parameter.getGradient().toDoubleArray();
          double[] values = parameter.toDoubleArray();
          for (int i = 0; i < values.length; i += Math.max(1, values.length / 3)) {
            double numeric = finiteDifference(model, batch, parameter, values, i);
            assertThat(gradient[i])
                .as("d loss / d %s[%d]", entry.getKey(), i)
                .isCloseTo(numeric, within(1e-6 + 1e-4 * Math.abs(numeric)));
            checked++;
          }
        }
      }
      assertThat(checked).isGreaterThan(40);
    }
  }

  private static double finiteDifference(
      LoraLlama model, TokenBatch batch, NDArray parameter, double[] values, int i) {
    double h = 1e-5;
    double original = values[i];
    values[i] = original + h;
    parameter.set(java.nio.DoubleBuffer.wrap(values));
    double up = model.loss(batch, null).getDouble();
    values[i] = original - h;
    parameter.set(java.nio.DoubleBuffer.wrap(values));
    double down = model.loss(batch, null).getDouble();
    values[i] = original;
    parameter.set(java.nio.DoubleBuffer.wrap(values));
    return (up - down) / (2 * h);
  }
}
