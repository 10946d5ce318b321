package io.engram.inference.local;

import java.util.List;

/**
 * Stop sequences over streamed text: pieces are held back only while they could be the start of
 * a stop sequence, so a client never sees part of one, and the reply ends before the first stop.
 */
final class StopSequences {
  private final List<String> stops;
  private final StringBuilder released = new StringBuilder();
  private final StringBuilder pending = new StringBuilder();
  private boolean stopped;

  StopSequences(List<String> stops) {
    this.stops = stops;
  }

  /** Takes a decoded piece and returns what can be sent now. */
  String accept(String piece) {
    if (stopped) {
      return "";
    }
    pending.append(piece);
    for (String stop : stops) {
      int at = pending.indexOf(stop);
      if (at >= 0) {
        stopped = true;
        return release(at);
      }
    }
    return release(pending.length() - heldBack());
  }

  boolean stopped() {
    return stopped;
  }

  /** The longest tail of the pending text that is a prefix of some stop sequence. */
  private int heldBack() {
    int held = 0;
    for (String stop : stops) {
      for (int len = Math.min(stop.length() - 1, pending.length()); len > held; len--) {
        if (pending.substring(pending.length() - len).equals(stop.substring(0, len))) {
          held = len;
          break;
        }
      }
    }
    return held;
  }

  private String release(int upTo) {
    String out = pending.substring(0, upTo);
    pending.delete(0, stopped ? pending.length() : upTo);
    released.append(out);
    return out;
  }

  /** At the end, what was held back is text after all. */
  String flush() {
    if (stopped) {
      return "";
    }
    return release(pending.length());
  }

  String text() {
    return released.toString();
  }
}
