package io.engram.inference.local;

import com.github.tjake.jlama.model.DistributedContext;
import com.github.tjake.jlama.safetensors.DType;
import com.github.tjake.jlama.safetensors.TensorInfo;
import com.github.tjake.jlama.safetensors.WeightLoader;
import com.github.tjake.jlama.tensor.AbstractTensor;
import java.util.Map;

/**
 * A model's weights as whole tensors when this node holds the whole model. jlama asks for most
 * layer weights as sparse views (its layout for splitting a model across machines), and it does
 * not quantize a sparse view: at load, only the output projections would become int4. On one node
 * the view is the whole tensor, so it is loaded whole and every layer weight is quantized.
 */
final class DenseWeights implements WeightLoader {
  private final WeightLoader file;

  DenseWeights(WeightLoader file) {
    this.file = file;
  }

  @Override
  public Map<String, String> metadata() {
    return file.metadata();
  }

  @Override
  public Map<String, TensorInfo> tensorInfoMap() {
    return file.tensorInfoMap();
  }

  @Override
  public AbstractTensor load(
      String name, DistributedContext dctx, boolean sparseRows, boolean sparseColumns) {
    if (dctx == null || !dctx.hasModelShard()) {
      return file.load(name, null, false, false);
    }
    return file.load(name, dctx, sparseRows, sparseColumns);
  }

  @Override
  public DType getModelDType() {
    return file.getModelDType();
  }

  @Override
  public void close() throws Exception {
    file.close();
  }
}
