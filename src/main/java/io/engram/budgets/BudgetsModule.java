package io.engram.budgets;

import io.engram.platform.cluster.Cluster;
import io.engram.platform.http.Routes;
import io.engram.platform.module.Job;
import io.engram.platform.module.Module;
import io.engram.store.Database;
import io.engram.store.Leases;
import java.time.Clock;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.BiPredicate;

/**
 * Budgets in money (docs/budgets.md): their routes, the gate the gateway's requests pass ({@link
 * #budgets()}), the spend written every second, other nodes' budget changes followed every
 * second, and the 80 % and 100 % alerts.
 */
public final class BudgetsModule implements Module {
  /** A budget's share spent that raises its warning. */
  static final double NEARLY = 0.8;

  private static final Duration ALERT_ROUND = Duration.ofSeconds(10);

  /** Where the budgets' thresholds are told: the alert channels, in the alerts module. */
  public interface Thresholds {
    /**
     * Whether some budget of the organization has {@code spent} all of its limit (or, when false,
     * at least 80 %) holds now; {@code share} the largest share, {@code message} which budgets.
     */
    void reached(String orgId, boolean spent, boolean holds, double share, String message);
  }

  private final Budgets budgets;
  private final BudgetRoutes routes;
  private final Leases leases;
  private Thresholds thresholds = (orgId, spent, holds, share, message) -> {};
  private final Set<String> alerting = new HashSet<>();

  public BudgetsModule(
      Database database,
      Cluster cluster,
      BiPredicate<String, String> keyExists,
      BiPredicate<String, String> assistantExists,
      long maxBodyBytes,
      Clock clock) {
    BudgetStore store = new BudgetStore(database);
    SpendLedger ledger = new SpendLedger(store, clock);
    SpendCounters local = new LocalSpendCounters(ledger);
    SpendCounters counters = cluster
        .redis()
        .<SpendCounters>map(redis -> new RedisSpendCounters(redis, ledger, local))
        .orElse(local);
    this.budgets = new Budgets(store, ledger, counters, keyExists, assistantExists);
    this.routes = new BudgetRoutes(budgets, maxBodyBytes);
    this.leases = new Leases(database, clock);
  }

  /** The gate every model request passes, and the budgets as they stand. */
  public Budgets budgets() {
    return budgets;
  }

  /** Tells budgets reaching 80 % and 100 % of their limit through {@code thresholds}. */
  public BudgetsModule alertThrough(Thresholds thresholds) {
    this.thresholds = thresholds;
    return this;
  }

  @Override
  public String name() {
    return "budgets";
  }

  @Override
  public void register(Routes table) {
    routes.register(table);
  }

  @Override
  public List<Job> jobs() {
    return List.of(
        Job.every(Duration.ofSeconds(1), "write spend", budgets::flush),
        Job.every(Duration.ofSeconds(1), "follow budgets changed", budgets::follow),
        Job.every(ALERT_ROUND, "alert on budgets at 80 and 100 percent", this::alertRound));
  }

  /**
   * One node at a time (a lease that outlives a missed round) fires or resolves each
   * organization's two budget alerts; an organization whose budgets went has both resolved.
   */
  synchronized void alertRound() {
    if (!leases.hold("budgets.alerts", ALERT_ROUND.multipliedBy(3))) {
      return;
    }
    Set<String> now = new HashSet<>();
    budgets.all().keySet().forEach(orgId -> {
      List<Budgets.Standing> standings = budgets.standings(orgId);
      report(orgId, true, standings.stream().filter(s -> s.share() >= 1).toList());
      report(
          orgId,
          false,
          standings.stream().filter(s -> s.share() >= NEARLY && s.share() < 1).toList());
      now.add(orgId);
    });
    alerting.stream().filter(orgId -> !now.contains(orgId)).forEach(orgId -> {
      thresholds.reached(orgId, true, false, 0, "The organization has no budget");
      thresholds.reached(orgId, false, false, 0, "The organization has no budget");
    });
    alerting.clear();
    alerting.addAll(now);
  }

  private void report(String orgId, boolean spent, List<Budgets.Standing> reached) {
    double share = reached.stream().mapToDouble(Budgets.Standing::share).max().orElse(0);
    String message = reached.isEmpty()
        ? (spent ? "No budget is spent" : "No budget is at 80 % or more of its limit")
        : reached.stream()
            .map(
                s -> "the " + s.budget().scope().id() + " budget " + s.budget().id() + " has spent "
                    + Money.dollars(s.spentNanos()) + " of its "
                    + Money.dollars(s.budget().limitNanos())
                    + " for the " + s.budget().period().id())
            .reduce((a, b) -> a + "; " + b)
            .map(text -> Character.toUpperCase(text.charAt(0)) + text.substring(1))
            .orElseThrow();
    thresholds.reached(orgId, spent, !reached.isEmpty(), share, message);
  }

  @Override
  public void close() {
    budgets.flush();
  }
}
