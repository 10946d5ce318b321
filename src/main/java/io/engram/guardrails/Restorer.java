package io.engram.guardrails;

import java.util.Map;

/**
 * Gives a client back what a {@code restore} guardrail hid from the provider: each placeholder of
 * the conversation in the answer becomes its original again. Streamed, a piece that ends inside
 * what may be a placeholder ({@code "[EMA"}) keeps that tail until the next piece tells; no more
 * than the longest placeholder is held.
 */
public final class Restorer {
  private final Map<String, String> originals;
  private final int longest;
  private final StringBuilder held = new StringBuilder();

  /** {@code originals}: placeholder to original, as {@link Placeholders#restorable()} gives. */
  public Restorer(Map<String, String> originals) {
    this.originals = Map.copyOf(originals);
    this.longest = originals.keySet().stream().mapToInt(String::length).max().orElse(0);
  }

  public boolean restores() {
    return !originals.isEmpty();
  }

  /** A whole text with its placeholders restored. */
  public String restored(String text) {
    if (text == null || originals.isEmpty() || text.indexOf('[') < 0) {
      return text;
    }
    StringBuilder out = new StringBuilder(text.length());
    int at = 0;
    for (int open = text.indexOf('['); open >= 0; open = text.indexOf('[', open + 1)) {
      int close = text.indexOf(']', open);
      if (close < 0 || close - open + 1 > longest) {
        continue;
      }
      String original = originals.get(text.substring(open, close + 1));
      if (original != null && open >= at) {
        out.append(text, at, open).append(original);
        at = close + 1;
      }
    }
    return out.append(text, at, text.length()).toString();
  }

  /** The next streamed piece: what may go on now, restored (a possible placeholder's start held). */
  public String take(String piece) {
    held.append(piece);
    int open = held.lastIndexOf("[");
    int keep = open >= 0 && held.indexOf("]", open) < 0 && held.length() - open < longest
        ? open
        : held.length();
    String out = restored(held.substring(0, keep));
    held.delete(0, keep);
    return out;
  }

  /** What is still held at the end of the stream, restored. */
  public String finish() {
    String out = restored(held.toString());
    held.setLength(0);
    return out;
  }
}
