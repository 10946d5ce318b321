package io.engram.budgets;

import java.util.List;

/**
 * What every model request passes before it is sent: what it may cost reserved against the
 * budgets that cover it ({@link Budgets}), or none ({@link #NONE}: nothing counted).
 */
public interface SpendGate {
  /** No budgets: every request passes and nothing is counted. */
  SpendGate NONE = (spender, mostNanos) -> cost -> {};

  /**
   * Reserves {@code mostNanos}, the most the request may cost, for {@code spender}, or throws the
   * 429 that refuses it; the hold settles with what it cost.
   */
  Budgets.Hold reserve(Spender spender, long mostNanos);

  /** The organization's budgets as they stand now (none without budgets). */
  default List<Budgets.Standing> standings(String orgId) {
    return List.of();
  }
}
