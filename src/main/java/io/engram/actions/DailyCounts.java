package io.engram.actions;

import io.engram.store.Database;
import java.time.Instant;
import java.time.ZoneOffset;

/**
 * Uses of a capability per assistant per UTC day, for limits such as {@code maxOrdersPerDay}. A
 * use is taken with a conditional increment ({@code used < max}) in one statement, so the limit
 * holds exactly however many conversations, or nodes on one PostgreSQL, take at once.
 */
final class DailyCounts {
  private final Database db;

  DailyCounts(Database db) {
    this.db = db;
  }

  /** Takes one use of today's {@code max}; false when they are all taken. */
  boolean take(String orgId, String assistantId, String capabilityId, Instant at, int max) {
    String day = day(at);
    return db.write(h -> {
      h.createUpdate("""
              INSERT INTO capability_daily_counts (org_id, assistant_id, capability_id, day, used)
              VALUES (:org, :assistant, :capability, :day, 0)
              ON CONFLICT (org_id, assistant_id, capability_id, day) DO NOTHING""")
          .bind("org", orgId)
          .bind("assistant", assistantId)
          .bind("capability", capabilityId)
          .bind("day", day)
          .execute();
      return h.createUpdate("""
                  UPDATE capability_daily_counts SET used = used + 1
                  WHERE org_id = :org AND assistant_id = :assistant
                    AND capability_id = :capability AND day = :day AND used < :max""")
              .bind("org", orgId)
              .bind("assistant", assistantId)
              .bind("capability", capabilityId)
              .bind("day", day)
              .bind("max", max)
              .execute()
          == 1;
    });
  }

  /** Gives a use back (the action was rejected or failed, so nothing was created). */
  void giveBack(String orgId, String assistantId, String capabilityId, Instant at) {
    db.write(h -> h.createUpdate("""
            UPDATE capability_daily_counts SET used = used - 1
            WHERE org_id = :org AND assistant_id = :assistant AND capability_id = :capability
              AND day = :day AND used > 0""")
        .bind("org", orgId)
        .bind("assistant", assistantId)
        .bind("capability", capabilityId)
        .bind("day", day(at))
        .execute());
  }

  private static String day(Instant at) {
    return at.atOffset(ZoneOffset.UTC).toLocalDate().toString();
  }
}
