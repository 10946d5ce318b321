package io.engram.budgets;

/**
 * What one scope spent in one period: what every budget of that scope and period is held to
 * (two budgets on the same scope and period share it).
 */
record Counter(
    String orgId, Budget.Scope scope, String scopeId, Budget.Period period, long periodStart) {

  /** In braces, the organization: one script touches all of a request's counters. */
  String redisKey() {
    return "engram:spend:{" + orgId + "}:" + scope.id() + ":" + scopeId + ":" + period.id() + ":"
        + periodStart;
  }
}
