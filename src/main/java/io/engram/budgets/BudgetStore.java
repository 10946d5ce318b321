package io.engram.budgets;

import io.engram.store.Database;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Optional;

/** The budgets and the spend per scope and day (V28__budgets_and_spend.sql). */
final class BudgetStore {

  /** What one scope spent in one UTC day, in billionths of a dollar. */
  record DaySpend(
      String orgId, Budget.Scope scope, String scopeId, long dayStart, long costNanos) {}

  /** How the budgets stand as a whole: a change on any node changes one of the two. */
  record Version(long count, long lastChange) {}

  private final Database database;

  BudgetStore(Database database) {
    this.database = database;
  }

  void insert(Budget budget, long at) {
    database.write(h -> h.createUpdate("""
            INSERT INTO budgets (id, org_id, scope, scope_id, period, limit_nanos, created_at,
                                 created_by, changed_at)
            VALUES (:id, :org, :scope, :scopeId, :period, :limit, :created, :by, :at)""")
        .bind("id", budget.id())
        .bind("org", budget.orgId())
        .bind("scope", budget.scope().id())
        .bind("scopeId", budget.scopeId())
        .bind("period", budget.period().id())
        .bind("limit", budget.limitNanos())
        .bind("created", budget.createdAt())
        .bind("by", budget.createdBy())
        .bind("at", at)
        .execute());
  }

  /** Whether the organization had the budget (which is now gone). */
  boolean delete(String orgId, String id) {
    return database.write(
            h -> h.createUpdate("DELETE FROM budgets WHERE org_id = :org AND id = :id")
                .bind("org", orgId)
                .bind("id", id)
                .execute())
        > 0;
  }

  Optional<Budget> find(String orgId, String id) {
    return database.read(
        h -> h.createQuery("SELECT * FROM budgets WHERE org_id = :org AND id = :id")
            .bind("org", orgId)
            .bind("id", id)
            .map((rs, ctx) -> budget(rs))
            .findOne());
  }

  /** Every organization's budgets, oldest first (what each node keeps in memory). */
  List<Budget> all() {
    return database.read(h -> h.createQuery("SELECT * FROM budgets ORDER BY id")
        .map((rs, ctx) -> budget(rs))
        .list());
  }

  Version version() {
    return database.read(h -> h.createQuery(
            "SELECT COUNT(*) AS n, COALESCE(MAX(changed_at), 0) AS last FROM budgets")
        .map((rs, ctx) -> new Version(rs.getLong("n"), rs.getLong("last")))
        .one());
  }

  /** Adds the days' spend to what is stored, in one transaction. */
  void add(List<DaySpend> days) {
    if (days.isEmpty()) {
      return;
    }
    database.write(h -> {
      var batch = h.prepareBatch("""
          INSERT INTO spend (org_id, scope, scope_id, day_start, cost_nanos)
          VALUES (:org, :scope, :scopeId, :day, :cost)
          ON CONFLICT (org_id, scope, scope_id, day_start) DO UPDATE SET
            cost_nanos = spend.cost_nanos + excluded.cost_nanos""");
      for (DaySpend day : days) {
        batch
            .bind("org", day.orgId())
            .bind("scope", day.scope().id())
            .bind("scopeId", day.scopeId())
            .bind("day", day.dayStart())
            .bind("cost", day.costNanos())
            .add();
      }
      batch.execute();
      return null;
    });
  }

  /** What the counter's scope spent from its period's start on, as stored. */
  long spent(Counter counter) {
    return database.read(h -> h.createQuery("""
            SELECT COALESCE(SUM(cost_nanos), 0) FROM spend
            WHERE org_id = :org AND scope = :scope AND scope_id = :scopeId AND day_start >= :from
              AND day_start < :to""")
        .bind("org", counter.orgId())
        .bind("scope", counter.scope().id())
        .bind("scopeId", counter.scopeId())
        .bind("from", counter.periodStart())
        .bind("to", counter.period().end(counter.periodStart()))
        .mapTo(Long.class)
        .one());
  }

  private static Budget budget(ResultSet rs) throws SQLException {
    return new Budget(
        rs.getString("id"),
        rs.getString("org_id"),
        Budget.Scope.fromId(rs.getString("scope")).orElseThrow(),
        rs.getString("scope_id"),
        Budget.Period.fromId(rs.getString("period")).orElseThrow(),
        rs.getLong("limit_nanos"),
        rs.getLong("created_at"),
        rs.getString("created_by"));
  }
}
