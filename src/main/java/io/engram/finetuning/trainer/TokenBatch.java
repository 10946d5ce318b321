package io.engram.finetuning.trainer;

/**
 * Examples padded to one length: {@code weights[b][t]} is 1 where the token at t+1 is one the
 * model learns to produce (an assistant's), 0 elsewhere and on padding.
 */
public record TokenBatch(int[][] tokens, float[][] weights) {
  public int rows() {
    return tokens.length;
  }

  /** The number of tokens the loss counts. */
  public int trainedTokens() {
    int n = 0;
    for (float[] row : weights) {
      for (float w : row) {
        n += w > 0 ? 1 : 0;
      }
    }
    return n;
  }
}
