package io.engram.inference.usage;

import io.engram.platform.ratelimit.ConcurrencySlots;
import io.engram.platform.ratelimit.RateLimitDecision;
import io.engram.platform.ratelimit.RateLimiter;
import java.util.Optional;

/**
 * Admissions from a rate limiter, a slot counter and a token budget kept apart: this node's own
 * (no {@code REDIS_URL}), or the fallback of {@link RedisAdmissions} while Redis cannot be reached.
 */
final class LocalAdmissions implements Admissions {
  private final RateLimiter windows;
  private final ConcurrencySlots slots;
  private final TokenBudgets budgets;

  LocalAdmissions(RateLimiter windows, ConcurrencySlots slots, TokenBudgets budgets) {
    this.windows = windows;
    this.slots = slots;
    this.budgets = budgets;
  }

  @Override
  public Entry enter(String orgId, long concurrency, String windowKey, long windowLimit) {
    RateLimitDecision window = windows.acquire(windowKey, windowLimit);
    ConcurrencySlots.Slot slot =
        window.allowed() ? slots.take(orgId, concurrency).orElse(null) : null;
    return new Entry(orgId, window, slot);
  }

  @Override
  public Admission admit(Entry entry, long hourlyLimit, long need, long want) {
    return reserve(held(entry), entry.orgId(), hourlyLimit, need, want);
  }

  /** The entry's slot, which its admission now owns. */
  static ConcurrencySlots.Slot held(Entry entry) {
    ConcurrencySlots.Slot slot = entry.handOver();
    if (slot == null) {
      throw new IllegalStateException("admitting a request that holds no slot");
    }
    return slot;
  }

  @Override
  public Admission admit(String orgId, long concurrency, long hourlyLimit, long need, long want) {
    Optional<ConcurrencySlots.Slot> taken = slots.take(orgId, concurrency);
    if (taken.isEmpty()) {
      return Admission.tooManyInFlight();
    }
    return reserve(taken.get(), orgId, hourlyLimit, need, want);
  }

  /** Reserves the tokens of a request holding {@code slot}; a refusal gives the slot back. */
  Admission reserve(
      ConcurrencySlots.Slot slot, String orgId, long hourlyLimit, long need, long want) {
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
