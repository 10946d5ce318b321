package io.engram.memory;

import java.time.Instant;

/**
 * When a memory holds: from {@code validFrom} (null: always did) until {@code validUntil}
 * (exclusive; null: still does), and when it expires ({@code expiresAt}, null: never), after which
 * it is never retrieved and housekeeping tombstones it. {@code supersedes}: the memory this one
 * replaced (its validity was closed at this one's start), or null.
 */
public record Validity(
    Instant validFrom, Instant validUntil, Instant expiresAt, String supersedes) {
  public static final Validity NONE = new Validity(null, null, null, null);

  /** Whether the memory was true at {@code at}. */
  public boolean holdsAt(Instant at) {
    return (validFrom == null || !at.isBefore(validFrom))
        && (validUntil == null || at.isBefore(validUntil));
  }

  public boolean expiredAt(Instant now) {
    return expiresAt != null && !now.isBefore(expiresAt);
  }

  /** This validity closed at {@code until} (a newer memory replaced it then). */
  public Validity until(Instant until) {
    return new Validity(validFrom, until, expiresAt, supersedes);
  }
}
