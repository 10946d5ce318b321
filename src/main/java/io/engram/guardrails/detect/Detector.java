package io.engram.guardrails.detect;

import java.util.List;

/** One kind of check over text: every place it fires, in the order they start. */
public interface Detector {
  List<Finding> find(String text);
}
