package io.engram.memory;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import java.io.IOException;
import java.io.InputStream;
import java.nio.FloatBuffer;
import java.nio.LongBuffer;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Several texts through the model in one call: their token ids padded to the longest into one
 * {@code [texts, tokens]} input, the model's last hidden state mean-pooled over each text's own
 * tokens. One call for sixteen short questions costs a fraction of sixteen calls (the weights are
 * read once, the matrix products are wider), which is what lets concurrent chats share the model
 * ({@link QueryBatcher}). A text is pooled exactly as the one-text path pools it (all its tokens,
 * [CLS] and [SEP] included); only texts the model reads whole (at most {@link #MAX_TOKENS} tokens)
 * come here, longer ones go through the one-text path, which averages windows of them.
 */
final class BatchEncoder {
  /** The model's positions: a text of more tokens is read in windows, one text at a time. */
  static final int MAX_TOKENS = 512;

  private final OrtEnvironment environment;
  private final OrtSession session;
  private final HuggingFaceTokenizer tokenizer;
  private final boolean typeIds;
  /** The last hidden state: the only output pooling reads, so the only one asked for. */
  private final Set<String> hiddenState;

  BatchEncoder(OrtEnvironment environment, OrtSession session, InputStream tokenizerJson)
      throws IOException, OrtException {
    this.environment = environment;
    this.session = session;
    this.tokenizer = HuggingFaceTokenizer.newInstance(tokenizerJson, Map.of("padding", "false"));
    this.typeIds = session.getInputNames().contains("token_type_ids");
    this.hiddenState = Set.of(session.getOutputNames().iterator().next());
  }

  /** The texts' token ids, [CLS] and [SEP] included: what {@link #encode} reads. */
  Encoding[] tokenize(List<String> texts) {
    return tokenizer.batchEncode(texts, true, false);
  }

  /** Whether the model reads this text whole (not in windows) and it has words to read. */
  static boolean fitsWhole(Encoding tokens) {
    int length = tokens.getIds().length;
    return length > 2 && length <= MAX_TOKENS;
  }

  /** Mean-pooled hidden states, one per encoding (each {@link #fitsWhole}), not yet unit length. */
  float[][] encode(List<Encoding> texts) throws OrtException {
    int rows = texts.size();
    int width = texts.stream().mapToInt(e -> e.getIds().length).max().orElse(0);
    long[] ids = new long[rows * width];
    long[] mask = new long[rows * width];
    for (int row = 0; row < rows; row++) {
      long[] own = texts.get(row).getIds();
      System.arraycopy(own, 0, ids, row * width, own.length);
      Arrays.fill(mask, row * width, row * width + own.length, 1L);
    }
    long[] shape = {rows, width};
    Map<String, OnnxTensor> inputs = new HashMap<>();
    try {
      inputs.put("input_ids", OnnxTensor.createTensor(environment, LongBuffer.wrap(ids), shape));
      inputs.put(
          "attention_mask", OnnxTensor.createTensor(environment, LongBuffer.wrap(mask), shape));
      if (typeIds) {
        inputs.put(
            "token_type_ids",
            OnnxTensor.createTensor(environment, LongBuffer.wrap(new long[rows * width]), shape));
      }
      try (OrtSession.Result result = session.run(inputs, hiddenState)) {
        FloatBuffer hidden = ((OnnxTensor) result.get(0)).getFloatBuffer();
        return pooled(hidden, texts, width);
      }
    } finally {
      inputs.values().forEach(OnnxTensor::close);
    }
  }

  private static float[][] pooled(FloatBuffer hidden, List<Encoding> texts, int width) {
    int dimensions = hidden.capacity() / (texts.size() * width);
    float[][] vectors = new float[texts.size()][dimensions];
    for (int row = 0; row < texts.size(); row++) {
      int length = texts.get(row).getIds().length;
      float[] sum = vectors[row];
      for (int token = 0; token < length; token++) {
        int at = (row * width + token) * dimensions;
        for (int d = 0; d < dimensions; d++) {
          sum[d] += hidden.get(at + d);
        }
      }
      for (int d = 0; d < dimensions; d++) {
        sum[d] /= length;
      }
    }
    return vectors;
  }
}
