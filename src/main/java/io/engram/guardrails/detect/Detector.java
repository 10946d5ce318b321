package io.engram.guardrails.detect;

import java.util.List;

/** One kind of check over text: every place it fires, in the order they start. */
public interface Detector {
  /** A text that is never complete until its end: a streamed answer is screened whole. */
  int WHOLE_TEXT = Integer.MAX_VALUE;

  List<Finding> find(String text);

  /**
   * The most characters a finding spans with the context it is judged by (a look-behind, a
   * boundary after it): a streamed answer holds back this many characters, and no more, until
   * what follows settles whether they fire.
   */
  int reach();
}
