package io.engram.alerts;

import java.time.Instant;

/**
 * One episode of an alert's condition: it starts {@code firing} and ends {@code resolved}.
 * {@code value} is the latest measurement while firing (the last one when resolved), against
 * {@code threshold}, in the unit its kind documents.
 */
public record Alert(
    String id,
    String orgId,
    AlertKind kind,
    State state,
    Instant startedAt,
    Instant endedAt,
    double value,
    double threshold,
    String message) {

  public enum State {
    FIRING,
    RESOLVED;

    public String id() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }
}
