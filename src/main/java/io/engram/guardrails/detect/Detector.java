package io.engram.guardrails.detect;

import java.util.List;

/** One kind of check over text: every place it fires, in the order they start. */
public interface Detector {
  List<Finding> find(String text);

  /**
   * The most characters one finding can span, so a stream can be checked piece by piece holding
   * back no more than that; {@link Integer#MAX_VALUE} when unbounded.
   */
  int longestMatch();
}
