package io.engram.budgets;

import java.util.LinkedHashMap;
import java.util.Map;

/** A budget as the API shows it: amounts in US dollars, times in Unix seconds. */
public final class BudgetViews {
  /** The unit of the models' prices, and so of every budget. */
  public static final String CURRENCY = "USD";

  private BudgetViews() {}

  public static Map<String, Object> view(Budgets.Standing standing) {
    Budget budget = standing.budget();
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("id", budget.id());
    view.put("object", "budget");
    view.put("scope", budget.scope().id());
    view.put("scope_id", budget.scopeId().isEmpty() ? null : budget.scopeId());
    view.put("period", budget.period().id());
    view.put("currency", CURRENCY);
    view.put("limit", Money.number(budget.limitNanos()));
    view.put("spent", Money.number(standing.spentNanos()));
    view.put("remaining", Money.number(standing.remainingNanos()));
    view.put("period_start", standing.periodStart() / 1000);
    view.put("resets_at", standing.periodEnd() / 1000);
    view.put("created_at", budget.createdAt() / 1000);
    return view;
  }
}
