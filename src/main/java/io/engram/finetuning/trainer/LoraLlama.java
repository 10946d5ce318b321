package io.engram.finetuning.trainer;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDArrays;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.index.NDIndex;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import io.engram.inference.local.Safetensors;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * A Llama-architecture causal language model with LoRA adapters, as PyTorch tensors: the same
 * forward pass the local engine runs (embeddings, RMSNorm, rotary attention with a causal mask and
 * grouped key-value heads, SwiGLU MLP, output head), with the base weights frozen and only the
 * adapters' A and B matrices trainable. PyTorch's autograd gives the backward pass.
 *
 * <p>Adapters are kept by their PEFT names ({@code model.layers.N.self_attn.q_proj}), A as (r x
 * in) initialised like PEFT (uniform, Kaiming bound), B as (out x r) zeros, so a fresh adapter
 * changes nothing.
 */
public final class LoraLlama implements AutoCloseable {
  private final LlamaShape shape;
  private final LoraSettings lora;
  private final NDManager manager;
  private final DataType dtype;
  /** Frozen weights; the projections stored transposed (in x out) for x.matMul. */
  private final Map<String, NDArray> base = new LinkedHashMap<>();

  private final Map<String, Adapter> adapters = new LinkedHashMap<>();

  /** One projection's adapter: A (r x in) and B (out x r). */
  public record Adapter(NDArray a, NDArray b) {}

  private LoraLlama(LlamaShape shape, LoraSettings lora, NDManager manager, DataType dtype) {
    this.shape = shape;
    this.lora = lora;
    this.manager = manager;
    this.dtype = dtype;
  }

  /**
   * Loads the base model from its directory and creates fresh adapters from {@code seed}.
   *
   * @param dtype FLOAT32 to train; FLOAT64 where gradients are checked against finite differences
   */
  public static LoraLlama load(
      Path modelDir, LoraSettings lora, long seed, NDManager parent, DataType dtype)
      throws IOException {
    LlamaShape shape = LlamaShape.read(modelDir);
    NDManager manager = parent.newSubManager();
    LoraLlama model = new LoraLlama(shape, lora, manager, dtype);
    try {
      model.loadBase(Safetensors.open(modelDir.resolve("model.safetensors")));
      model.initAdapters(new SplittableRandom(seed));
      return model;
    } catch (IOException | RuntimeException e) {
      manager.close();
      throw e;
    }
  }

  private void loadBase(Safetensors.Reader weights) throws IOException {
    put(weights, "model.embed_tokens.weight", false);
    for (int layer = 0; layer < shape.layers(); layer++) {
      String prefix = "model.layers." + layer + ".";
      for (String module : LoraSettings.MODULES) {
        put(weights, prefix + LlamaShape.block(module) + "." + module + ".weight", true);
      }
      put(weights, prefix + "input_layernorm.weight", false);
      put(weights, prefix + "post_attention_layernorm.weight", false);
    }
    put(weights, "model.norm.weight", false);
    if (weights.has("lm_head.weight")) {
      put(weights, "lm_head.weight", true);
    } else {
      // tied embeddings: the head is the embedding matrix, transposed for x.matMul
      base.put("lm_head.weight", base.get("model.embed_tokens.weight").transpose());
    }
  }

  private void put(Safetensors.Reader weights, String name, boolean transposed) throws IOException {
    int[] dims = weights.shape(name);
    long[] shapeLongs = new long[dims.length];
    for (int i = 0; i < dims.length; i++) {
      shapeLongs[i] = dims[i];
    }
    NDArray array = tensor(weights.floats(name), new Shape(shapeLongs));
    if (transposed) {
      NDArray copy = array.transpose().duplicate();
      array.close();
      array = copy;
    }
    base.put(name, array);
  }

  private void initAdapters(SplittableRandom random) {
    for (int layer = 0; layer < shape.layers(); layer++) {
      for (String module : lora.targets()) {
        int[] outIn = shape.projection(module);
        // PEFT's default for A: kaiming_uniform(a=sqrt(5)), a bound of 1/sqrt(in)
        double bound = 1.0 / Math.sqrt(outIn[1]);
        float[] a = new float[lora.rank() * outIn[1]];
        for (int i = 0; i < a.length; i++) {
          a[i] = (float) ((random.nextDouble() * 2 - 1) * bound);
        }
        NDArray aArray = parameter(tensor(a, new Shape(lora.rank(), outIn[1])));
        NDArray bArray = parameter(manager.zeros(new Shape(outIn[0], lora.rank())));
        adapters.put(moduleName(layer, module), new Adapter(aArray, bArray));
      }
    }
  }

  private NDArray parameter(NDArray array) {
    NDArray typed = array.getDataType() == dtype ? array : array.toType(dtype, false);
    typed.setRequiresGradient(true);
    return typed;
  }

  public static String moduleName(int layer, String module) {
    return "model.layers." + layer + "." + LlamaShape.block(module) + "." + module;
  }

  public LlamaShape shape() {
    return shape;
  }

  public LoraSettings lora() {
    return lora;
  }

  public NDManager manager() {
    return manager;
  }

  /** The adapters by module name, in layer order. */
  public Map<String, Adapter> adapters() {
    return adapters;
  }

  /**
   * The mean cross-entropy of the batch's weighted next-token predictions: position t predicts
   * token t+1 and counts with {@code batch.weights[b][t]} (1 on assistant tokens, 0 elsewhere).
   *
   * @param dropout where the adapters' input dropout comes from; null for none (evaluation)
   */
  public NDArray loss(TokenBatch batch, SplittableRandom dropout) {
    NDArray logits = logits(batch.tokens(), dropout);
    int rows = batch.tokens().length;
    int length = batch.tokens()[0].length;
    long[] targets = new long[rows * length];
    float[] weights = new float[rows * length];
    for (int b = 0; b < rows; b++) {
      for (int t = 0; t + 1 < length; t++) {
        targets[b * length + t] = batch.tokens()[b][t + 1];
        weights[b * length + t] = batch.weights()[b][t];
      }
    }
    NDArray target = owned(manager.create(targets, new Shape(rows, length, 1)));
    NDArray weight = tensor(weights, new Shape(rows, length));
    NDArray picked = logits.logSoftmax(-1).gather(target, 2).reshape(rows, length);
    return picked.mul(weight).sum().neg().div(weight.sum().maximum(scalar(1)));
  }

  /** Next-token logits, (batch x length x vocab). */
  public NDArray logits(int[][] tokens, SplittableRandom dropout) {
    int rows = tokens.length;
    int length = tokens[0].length;
    long[] ids = new long[rows * length];
    for (int b = 0; b < rows; b++) {
      for (int t = 0; t < length; t++) {
        ids[b * length + t] = tokens[b][t];
      }
    }
    NDArray x = base.get("model.embed_tokens.weight")
        .get(new NDIndex("{}", owned(manager.create(ids))))
        .reshape(rows, length, shape.hidden());
    Rope rope = new Rope(length);
    NDArray mask = causalMask(length);
    for (int layer = 0; layer < shape.layers(); layer++) {
      x = block(x, layer, rope, mask, dropout);
    }
    x = rmsNorm(x, base.get("model.norm.weight"));
    return x.matMul(base.get("lm_head.weight"));
  }

  private NDArray block(NDArray x, int layer, Rope rope, NDArray mask, SplittableRandom dropout) {
    String prefix = "model.layers." + layer + ".";
    int rows = (int) x.getShape().get(0);
    int length = (int) x.getShape().get(1);
    int headDim = shape.headDim();
    NDArray h = rmsNorm(x, base.get(prefix + "input_layernorm.weight"));
    NDArray hIn = dropped(h, dropout);
    NDArray q = heads(project(h, hIn, layer, "q_proj"), shape.heads(), headDim);
    NDArray k = heads(project(h, hIn, layer, "k_proj"), shape.kvHeads(), headDim);
    NDArray v = heads(project(h, hIn, layer, "v_proj"), shape.kvHeads(), headDim);
    q = rope.apply(q);
    k = rope.apply(k);
    int groups = shape.heads() / shape.kvHeads();
    if (groups > 1) {
      // query head h reads key-value head h / groups, as the local engine maps them
      k = k.expandDims(2).repeat(2, groups).reshape(rows, shape.heads(), length, headDim);
      v = v.expandDims(2).repeat(2, groups).reshape(rows, shape.heads(), length, headDim);
    }
    NDArray scores =
        q.matMul(k.transpose(0, 1, 3, 2)).mul(scalar(1.0 / Math.sqrt(headDim))).add(mask);
    NDArray attended =
        scores.softmax(-1).matMul(v).transpose(0, 2, 1, 3).reshape(rows, length, shape.hidden());
    x = x.add(project(attended, dropped(attended, dropout), layer, "o_proj"));
    NDArray h2 = rmsNorm(x, base.get(prefix + "post_attention_layernorm.weight"));
    NDArray h2In = dropped(h2, dropout);
    NDArray gate = project(h2, h2In, layer, "gate_proj");
    NDArray up = project(h2, h2In, layer, "up_proj");
    NDArray inner = gate.mul(Activation.sigmoid(gate)).mul(up);
    return x.add(project(inner, dropped(inner, dropout), layer, "down_proj"));
  }

  /** x W^T, plus the adapter's scaled B A (dropout on its input) where the module is a target. */
  private NDArray project(NDArray x, NDArray adapterInput, int layer, String module) {
    String name = moduleName(layer, module);
    NDArray out = x.matMul(base.get(name + ".weight"));
    Adapter adapter = adapters.get(name);
    if (adapter == null) {
      return out;
    }
    NDArray delta =
        adapterInput.matMul(adapter.a().transpose()).matMul(adapter.b().transpose());
    return out.add(delta.mul(scalar(lora.scale())));
  }

  /** Inverted dropout with a mask from the job's own random stream, so a seed reproduces a run. */
  private NDArray dropped(NDArray x, SplittableRandom random) {
    double rate = lora.dropout();
    if (random == null || rate == 0) {
      return x;
    }
    long n = x.getShape().size();
    float keep = (float) (1.0 / (1.0 - rate));
    float[] mask = new float[(int) n];
    for (int i = 0; i < mask.length; i++) {
      mask[i] = random.nextDouble() < rate ? 0f : keep;
    }
    return x.mul(tensor(mask, x.getShape()));
  }

  private NDArray heads(NDArray x, int count, int headDim) {
    long rows = x.getShape().get(0);
    long length = x.getShape().get(1);
    return x.reshape(rows, length, count, headDim).transpose(0, 2, 1, 3);
  }

  private NDArray rmsNorm(NDArray x, NDArray weight) {
    NDArray rms =
        x.square().mean(new int[] {-1}, true).add(scalar(shape.rmsEps())).sqrt();
    return x.div(rms).mul(weight);
  }

  private NDArray causalMask(int length) {
    float[] mask = new float[length * length];
    for (int i = 0; i < length; i++) {
      for (int j = i + 1; j < length; j++) {
        mask[i * length + j] = -1e9f;
      }
    }
    return tensor(mask, new Shape(length, length));
  }

  /**
   * A number as a tensor PyTorch owns. In the forward pass, never {@code x.mul(2.0)}: DJL makes
   * the number a tensor over a Java buffer and frees it right after the operation, while autograd
   * keeps that tensor for the backward pass, which then reads freed memory (NaN losses that come
   * and go with the garbage collector). This tensor lives until the step's scope closes.
   */
  public NDArray scalar(double value) {
    return tensor(new float[] {(float) value}, new Shape());
  }

  /** Values as a tensor of the model's type, in memory PyTorch owns ({@link #owned}). */
  private NDArray tensor(float[] values, Shape shape) {
    NDArray array = owned(manager.create(values, shape));
    if (array.getDataType() == dtype) {
      return array;
    }
    NDArray converted = array.toType(dtype, true);
    array.close();
    return converted;
  }

  /**
   * A copy in memory PyTorch allocated. DJL creates a tensor from Java data over a direct buffer
   * the Java array object keeps alive; once that object is closed (the step's scope), the buffer
   * may be collected while PyTorch still reads it (a view, a saved tensor), and training then
   * reads freed memory. Copies own their memory, whatever happens to the Java side.
   */
  static NDArray owned(NDArray blob) {
    NDArray copy = blob.duplicate();
    blob.close();
    return copy;
  }

  /** Rotary position embeddings in Hugging Face's layout: dimension i pairs with i + headDim/2. */
  private final class Rope {
    private final NDArray cos;
    private final NDArray sin;
    private final int half;

    Rope(int length) {
      int headDim = shape.headDim();
      half = headDim / 2;
      float[] cosines = new float[length * headDim];
      float[] sines = new float[length * headDim];
      for (int position = 0; position < length; position++) {
        for (int i = 0; i < half; i++) {
          double frequency = 1.0 / Math.pow(shape.ropeTheta(), 2.0 * i / headDim);
          double angle = position * frequency;
          int at = position * headDim + i;
          cosines[at] = cosines[at + half] = (float) Math.cos(angle);
          sines[at] = sines[at + half] = (float) Math.sin(angle);
        }
      }
      cos = tensor(cosines, new Shape(length, headDim));
      sin = tensor(sines, new Shape(length, headDim));
    }

    NDArray apply(NDArray x) {
      NDArray first = x.get("..., :" + half);
      NDArray second = x.get("..., " + half + ":");
      NDArray rotated = NDArrays.concat(new NDList(second.neg(), first), -1);
      return x.mul(cos).add(rotated.mul(sin));
    }
  }

  @Override
  public void close() {
    manager.close();
  }
}
