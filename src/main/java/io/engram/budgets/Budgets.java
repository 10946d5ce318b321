package io.engram.budgets;

import io.engram.platform.Ids;
import io.engram.platform.http.ApiException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiPredicate;
import java.util.stream.Collectors;

/**
 * The organizations' budgets in money, and the gate every model request passes: what it may cost
 * is reserved against every budget that covers it before it is sent ({@link #reserve}), refused
 * with 429 {@code budget_exceeded} when one would be passed, and settled with what it cost when it
 * ends. Each node keeps every budget in memory (read again within a second of a change on any
 * node, at once on the node that made it), so the gate reads no database on the request path.
 */
public final class Budgets implements SpendGate {

  /** A request's hold on its budgets, settled once with what the request cost. */
  public interface Hold {
    /** The request ended having cost {@code costNanos} (0 when it failed before any output). */
    void settle(long costNanos);
  }

  /** How one budget stands now. */
  public record Standing(Budget budget, long spentNanos, long periodStart, long periodEnd) {
    public long remainingNanos() {
      return Math.max(0, budget.limitNanos() - spentNanos);
    }

    /** The share of the limit spent; 1 and more when spent (a limit of 0 is spent at once). */
    public double share() {
      return budget.limitNanos() == 0 ? 1 : (double) spentNanos / budget.limitNanos();
    }
  }

  private final BudgetStore store;
  private final SpendLedger ledger;
  private final SpendCounters counters;
  private final BiPredicate<String, String> keyExists;
  private final BiPredicate<String, String> assistantExists;
  private volatile Map<String, List<Budget>> byOrganization = Map.of();
  private volatile BudgetStore.Version seen = new BudgetStore.Version(-1, -1);

  Budgets(
      BudgetStore store,
      SpendLedger ledger,
      SpendCounters counters,
      BiPredicate<String, String> keyExists,
      BiPredicate<String, String> assistantExists) {
    this.store = store;
    this.ledger = ledger;
    this.counters = counters;
    this.keyExists = keyExists;
    this.assistantExists = assistantExists;
    reload();
  }

  /** The most a budget may hold: exact in Redis's scripts, whose numbers are doubles. */
  static final long MAX_LIMIT_NANOS = 9_000_000L * 1_000_000_000L;

  /** A new budget of the organization; the scope's id must name its key or assistant. */
  public Budget create(
      String orgId,
      Budget.Scope scope,
      String scopeId,
      Budget.Period period,
      long limitNanos,
      String createdBy) {
    String id = switch (scope) {
      case ORGANIZATION -> {
        if (scopeId != null) {
          throw ApiException.badRequest(
              "scope_id", "An organization budget names no 'scope_id': it counts every request");
        }
        yield "";
      }
      case KEY -> known(scopeId, keyExists.test(orgId, scopeId), "API key or context token");
      case ASSISTANT -> known(scopeId, assistantExists.test(orgId, scopeId), "assistant");
    };
    long now = ledger.now();
    Budget budget =
        new Budget(Ids.newId("bud", now), orgId, scope, id, period, limitNanos, now, createdBy);
    store.insert(budget, now);
    reload();
    return budget;
  }

  private static String known(String scopeId, boolean exists, String what) {
    if (scopeId == null) {
      throw ApiException.badRequest(
          "scope_id", "This scope needs 'scope_id': the " + what + "'s id");
    }
    if (!exists) {
      throw ApiException.badRequest(
          "scope_id", "This organization has no " + what + " with the id '" + scopeId + "'");
    }
    return scopeId;
  }

  @Override
  public List<Standing> standings(String orgId) {
    return byOrganization.getOrDefault(orgId, List.of()).stream()
        .map(this::standing)
        .toList();
  }

  /** The organization's budget, or 404 (another organization's budget is not found either). */
  public Standing get(String orgId, String id) {
    return standing(store.find(orgId, id).orElseThrow(() -> notFound(id)));
  }

  public void delete(String orgId, String id) {
    if (!store.delete(orgId, id)) {
      throw notFound(id);
    }
    reload();
  }

  private static ApiException notFound(String id) {
    return ApiException.notFound("This organization has no budget '" + id + "'");
  }

  private Standing standing(Budget budget) {
    long now = ledger.now();
    // Read afresh (not the gate's copy, up to two seconds old): a reader sees every node's spend.
    return new Standing(
        budget,
        ledger.refresh(budget.counter(now)),
        budget.period().start(now),
        budget.period().end(now));
  }

  /**
   * Reserves what a request may cost ({@code costNanos}, at most) against every budget covering
   * its spender, or refuses it with 429 {@code budget_exceeded}, naming the budget and when it
   * renews, before any work is done.
   */
  @Override
  public Hold reserve(Spender spender, long costNanos) {
    List<Budget> covering = new ArrayList<>();
    for (Budget budget : byOrganization.getOrDefault(spender.orgId(), List.of())) {
      if (budget.covers(spender)) {
        covering.add(budget);
      }
    }
    // A request that may cost nothing passes every budget: no counter need hear of it.
    if (covering.isEmpty() || costNanos <= 0) {
      return cost -> ledger.record(spender, cost);
    }
    long now = ledger.now();
    List<Counter> held = covering.stream().map(budget -> budget.counter(now)).toList();
    long[] limits = covering.stream().mapToLong(Budget::limitNanos).toArray();
    SpendCounters.Reservation reservation =
        counters.reserve(spender.orgId(), held, limits, costNanos);
    if (reservation.refusedBy() >= 0) {
      throw exceeded(covering.get(reservation.refusedBy()), reservation.used(), costNanos, now);
    }
    AtomicBoolean open = new AtomicBoolean(true);
    return cost -> {
      if (open.compareAndSet(true, false)) {
        // Recorded before the hold goes back, so the budget never misses the cost in between.
        ledger.record(spender, cost);
        reservation.settle(Math.max(0, cost));
      }
    };
  }

  private static ApiException exceeded(Budget budget, long used, long cost, long now) {
    long renews = budget.period().end(now);
    return ApiException.rateLimited(
        "budget_exceeded",
        "This request could cost up to " + Money.dollars(cost) + " but the "
            + budget.scope().id() + " budget " + budget.id() + " has "
            + Money.dollars(Math.max(0, budget.limitNanos() - used)) + " of its "
            + Money.dollars(budget.limitNanos()) + " for the " + budget.period().id()
            + " left; it renews at " + Instant.ofEpochMilli(renews),
        Math.max(1, (renews - now + 999) / 1000));
  }

  /** Reads the budgets again when any node changed one since the last look (every second). */
  void follow() {
    if (!store.version().equals(seen)) {
      reload();
    }
  }

  private synchronized void reload() {
    BudgetStore.Version version = store.version();
    byOrganization = store.all().stream().collect(Collectors.groupingBy(Budget::orgId));
    seen = version;
  }

  /** Every organization with a budget (what the alerts look at). */
  Map<String, List<Budget>> all() {
    return byOrganization;
  }

  /** Writes the spend counted since the last flush. */
  void flush() {
    ledger.flush();
  }
}
