package io.engram.inference.usage;

import io.engram.platform.ratelimit.ConcurrencySlots;
import java.util.Optional;

/**
 * Admissions from a slot counter and a token budget kept apart: this node's own (no {@code
 * REDIS_URL}), or the fallback of {@link RedisAdmissions} while Redis cannot be reached.
 */
final class LocalAdmissions implements Admissions {
  private final ConcurrencySlots slots;
  private final TokenBudgets budgets;

  LocalAdmissions(ConcurrencySlots slots, TokenBudgets budgets) {
    this.slots = slots;
    this.budgets = budgets;
  }

  @Override
  public Admission admit(String orgId, long concurrency, long hourlyLimit, long need, long want) {
    Optional<ConcurrencySlots.Slot> taken = slots.take(orgId, concurrency);
    if (taken.isEmpty()) {
      return Admission.tooManyInFlight();
    }
    ConcurrencySlots.Slot slot = taken.get();
    if (hourlyLimit < 0) {
      return Admission.admitted(Long.MAX_VALUE, Long.MAX_VALUE, 0, used -> slot.close());
    }
    TokenBudgets.Reservation reservation = budgets.reserve(orgId, hourlyLimit, need, want);
    if (reservation.granted() <= 0) {
      slot.close();
      return Admission.outOfTokens(reservation.remaining(), reservation.resetSeconds());
    }
    return Admission.admitted(
        reservation.granted(), reservation.remaining(), reservation.resetSeconds(), used -> {
          slot.close();
          reservation.settle(used);
        });
  }

  @Override
  public long tokensUsed(String orgId) {
    return budgets.used(orgId);
  }

  @Override
  public long resetSeconds() {
    return budgets.resetSeconds();
  }
}
