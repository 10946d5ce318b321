package io.engram.memory;

import io.engram.platform.http.ApiException;
import java.time.Clock;
import java.time.Instant;
import java.util.Map;

/**
 * The memory's own upkeep, run as jobs: memories past their expiry tombstoned, old memories given
 * their digest, Idempotency-Keys past their retention forgotten.
 */
final class MemoryHousekeeping {
  private final MemoryStore store;
  private final IdempotencyKeys idempotencyKeys;
  private final MemoryIndex index;
  private final StateChanges changes;
  private final Clock clock;

  MemoryHousekeeping(MemoryStores stores, MemoryIndex index, Clock clock) {
    this.store = stores.memories();
    this.idempotencyKeys = stores.idempotencyKeys();
    this.index = index;
    this.changes = new StateChanges(stores);
    this.clock = clock;
  }

  /**
   * Housekeeping: tombstones memories whose {@code expiresAt} has passed, {@code limit} at a time,
   * each through the state machine with the expiry as its provenance's reason (retrieval already
   * left them out from that moment). Returns how many it tombstoned.
   */
  public int tombstoneExpired(int limit) {
    Instant now = clock.instant();
    int done = 0;
    for (Map<String, Object> row : store.expired(now, limit)) {
      String id = (String) row.get("id");
      Instant expiredAt = Instant.ofEpochMilli(((Number) row.get("expires_at")).longValue());
      try {
        StateChanges.Outcome outcome = store
            .database()
            .write(h -> changes.apply(
                h,
                (String) row.get("org_id"),
                id,
                MemoryAction.DELETE,
                new MemoryControl.Control("expired at " + expiredAt, "expiry"),
                new ChangeAuthor(null, null, null),
                now,
                found ->
                    found.orElseThrow(() -> ApiException.notFound("Memory " + id + " not found"))));
        if (outcome.change() != 0) {
          index.sync(id);
          index.applied(outcome.change());
        }
        done++;
      } catch (ApiException e) {
        // Changed meanwhile (tombstoned by someone else): nothing left to do for it.
      }
    }
    if (done > 0) {
      index.refresh();
    }
    return done;
  }

  /**
   * Gives the memories written before deduplication their digest, so an encode finds them too; a
   * thousand at a time until none is left (then it does not look again until the next start).
   */
  public void digestUndigested() {
    while (!allDigested && store.digestUndigested(1_000) > 0) {
      // the next thousand
    }
    allDigested = true;
  }

  private volatile boolean allDigested;

  /** Hourly: forget Idempotency-Keys past their retention. */
  public int purgeExpiredIdempotencyKeys() {
    return idempotencyKeys.purgeExpired(clock.instant());
  }
}
