package io.engram.inference.usage;

import io.engram.access.InferenceDoor;
import io.engram.access.Principal;
import io.engram.budgets.Budgets;
import io.engram.budgets.SpendGate;
import io.engram.budgets.Spender;
import io.engram.organizations.Limit;
import io.engram.organizations.Organization;
import io.engram.platform.cluster.Cluster;
import io.engram.platform.cluster.RedisConnection;
import io.engram.platform.http.ApiException;
import io.engram.platform.ratelimit.ConcurrencySlots;
import io.engram.platform.ratelimit.RateLimitDecision;
import io.engram.platform.ratelimit.RateLimiter;
import io.engram.platform.ratelimit.RedisSlots;
import io.engram.settings.ConfigField;
import io.engram.settings.EffectiveConfig;
import io.engram.settings.OrganizationConfigs;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The inference limits, checked before any work: tokens per request (a 400: the request can never
 * pass), tokens per hour from real usage and concurrent requests (429s: retrying later can pass).
 * Tokens per request and concurrency are the organization's configuration in force ({@link
 * EffectiveConfig}: plan, the organization's own setting, the instance's MAX_CONCURRENT_REQUESTS);
 * tokens per hour is the plan's. Requests per minute per key are applied earlier, by the access
 * chain; on the routes that run a model it takes the concurrency slot at the same time, through
 * this class's {@link InferenceDoor} ({@link #enter}), and the admission takes it over from the
 * pass the request carries.
 */
public final class InferenceLimits implements InferenceDoor {
  /** The entry a request took at the door, carried on the request to its admission. */
  private record AtDoor(Admissions.Entry entry) implements InferenceDoor.Pass {
    @Override
    public void close() {
      entry.close();
    }
  }

  /** What the caller learns about its token budget, for the x-ratelimit-*-tokens headers. */
  public record TokenBudget(long limit, long remaining, long resetSeconds) {}

  /**
   * What a request asks of the hourly budget: its prompt (what it sends, without the memory block),
   * the least reply it can do with and the longest it could use, and the most memory it could take,
   * the prompt and the memory as the gateway counts them; they are charged at {@code inputRatio}
   * times that ({@link BilledTokens}), the reply in the model's own tokens, as max_tokens bounds it.
   */
  public record TokenDemand(
      long promptTokens, long leastReply, long longestReply, long memory, double inputRatio) {
    /** A request whose tokens are all known up front, charged at {@code inputRatio} of them. */
    public static TokenDemand exactly(long tokens, double inputRatio) {
      return new TokenDemand(tokens, 0, 0, 0, inputRatio);
    }

    /** The prompt as it will be charged (at least one token). */
    public long promptCharged() {
      return Math.max(1, BilledTokens.atRatio(promptTokens, inputRatio));
    }

    /** The prompt with the most memory it could take, as they will be charged. */
    public long inputsCharged() {
      return promptCharged() + memoryCharged();
    }

    long memoryCharged() {
      return BilledTokens.atRatio(memory, inputRatio);
    }

    long need() {
      return promptCharged() + leastReply;
    }

    long want() {
      return promptCharged() + longestReply + memoryCharged();
    }

    /** The memory block's tokens, as the gateway counts them, that {@code charged} tokens hold. */
    long memoryHeldBy(long charged) {
      return inputRatio <= 0 ? charged : (long) Math.floor(charged / inputRatio + 1e-9);
    }
  }

  /**
   * What a request may cost in money, held against the budgets covering it: the most it could cost
   * at its model's prices (its prompt, memory and longest reply), and the assistant it speaks as
   * (null when none).
   */
  public record Spending(String assistantId, long mostNanos) {
    /** A request of a model without prices, not as an assistant. */
    public static final Spending FREE = new Spending(null, 0);
  }

  /**
   * A request let in: a concurrency slot, the tokens and the money reserved for it, given back by
   * {@link #close()} (once) with what the request was charged ({@link #charge}, {@link
   * #chargeCost}).
   */
  public static final class Permit implements AutoCloseable {
    private final Admissions.Admission admission;
    private final Budgets.Hold spend;
    private final TokenBudget budget;
    private final long memoryAllowance;
    private final long replyAllowance;
    private final AtomicLong charged = new AtomicLong();
    private final AtomicLong cost = new AtomicLong();
    private final AtomicBoolean open = new AtomicBoolean(true);

    Permit(
        Admissions.Admission admission,
        Budgets.Hold spend,
        TokenBudget budget,
        long memoryAllowance,
        long replyAllowance) {
      this.admission = admission;
      this.spend = spend;
      this.budget = budget;
      this.memoryAllowance = memoryAllowance;
      this.replyAllowance = replyAllowance;
    }

    /** The hour's budget after this request's reservation; null when the plan has none. */
    public TokenBudget budget() {
      return budget;
    }

    /** The most tokens the memory block may take within the budget (MAX_VALUE: no budget). */
    public long memoryAllowance() {
      return memoryAllowance;
    }

    /** The longest reply the budget allows (MAX_VALUE: no budget). */
    public long replyAllowance() {
      return replyAllowance;
    }

    /** Charges tokens the request used (each step of a tool loop is charged as it ends). */
    public void charge(long tokens) {
      charged.addAndGet(tokens);
    }

    /** Charges what the tokens cost, in billionths of a dollar, against the request's budgets. */
    public void chargeCost(long nanos) {
      cost.addAndGet(nanos);
    }

    @Override
    public void close() {
      if (open.compareAndSet(true, false)) {
        try {
          admission.end(charged.get());
        } finally {
          spend.settle(cost.get());
        }
      }
    }
  }

  private final OrganizationConfigs configs;
  private final ConcurrencySlots slots;
  private final Admissions admissions;
  private final SpendGate spend;

  /** The limits of one node without Redis, and without budgets in money. */
  public InferenceLimits(UsageLedger usage, OrganizationConfigs configs, RateLimiter windows) {
    this(configs, ConcurrencySlots.local(), windows, usage, Optional.empty(), SpendGate.NONE);
  }

  /**
   * @param slots where requests in flight are counted: this node's, or shared through Redis
   * @param windows the node's request windows (the access chain's), which the door counts in
   * @param redis where the admissions are decided when slots are shared (else on this node)
   * @param spend the budgets in money every admitted request's cost is reserved against
   */
  private InferenceLimits(
      OrganizationConfigs configs,
      ConcurrencySlots slots,
      RateLimiter windows,
      UsageLedger usage,
      Optional<RedisConnection> redis,
      SpendGate spend) {
    this.configs = configs;
    this.slots = slots;
    this.spend = spend;
    LocalAdmissions local = new LocalAdmissions(windows, slots, new LocalTokenBudgets(usage));
    this.admissions = slots instanceof RedisSlots shared && redis.isPresent()
        ? new RedisAdmissions(redis.get(), shared, usage, local)
        : local;
  }

  /** The limits of this node: counted here, or in Redis shared with every node. */
  public static InferenceLimits open(
      UsageLedger usage,
      OrganizationConfigs configs,
      ConcurrencySlots slots,
      RateLimiter windows,
      Cluster cluster,
      SpendGate spend) {
    return new InferenceLimits(configs, slots, windows, usage, cluster.redis(), spend);
  }

  @Override
  public InferenceDoor.Pass enter(
      Principal caller, String windowKey, long windowLimit, Consumer<RateLimitDecision> report) {
    Organization org = caller.organization();
    long limit = concurrencyLimit(org);
    Admissions.Entry entry = admissions.enter(org.id(), limit, windowKey, windowLimit);
    try {
      report.accept(entry.window());
    } catch (RuntimeException refused) {
      entry.close();
      throw refused;
    }
    if (!entry.holdsSlot()) {
      throw tooManyInFlight(limit);
    }
    return new AtDoor(entry);
  }

  /** The most tokens one request of this organization may ask for; MAX_VALUE when unlimited. */
  public long tokensPerRequest(Organization org) {
    return configs.effective(org).count(ConfigField.MAX_TOKENS_PER_REQUEST);
  }

  /**
   * What a reply asked {@code asked} tokens long is lowered to when its organization lowers such a
   * request to quotas.max_tokens_per_request instead of refusing it (the switch {@code clamp});
   * empty when the request is within the limit or the organization refuses it.
   */
  public java.util.OptionalInt clampedMaxTokens(Organization org, int asked, ConfigField clamp) {
    EffectiveConfig config = configs.effective(org);
    long limit = config.count(ConfigField.MAX_TOKENS_PER_REQUEST);
    return asked > limit && config.switchedOn(clamp)
        ? java.util.OptionalInt.of((int) limit)
        : java.util.OptionalInt.empty();
  }

  public void checkTokensPerRequest(Organization org, int maxTokens, String param) {
    EffectiveConfig.Setting setting =
        configs.effective(org).setting(ConfigField.MAX_TOKENS_PER_REQUEST);
    long limit = tokensPerRequest(org);
    if (maxTokens > limit) {
      throw ApiException.badRequest(
          param,
          "'" + param + "' is " + maxTokens + " but "
              + (setting.source() == ConfigField.Source.ORGANIZATION
                  ? "this organization's quotas.max_tokens_per_request is "
                  : "the " + org.plan().id() + " plan allows at most ")
              + limit + " tokens per request");
    }
  }

  /** The organization's budgets in money as they stand now. */
  public java.util.List<Budgets.Standing> budgets(Organization org) {
    return spend.standings(org.id());
  }

  /** The hourly budget left now, or null when the plan has none. */
  public TokenBudget tokenBudget(Organization org) {
    Limit limit = org.plan().limits().tokensPerHour();
    if (limit.isUnlimited()) {
      return null;
    }
    return new TokenBudget(
        limit.value(),
        Math.max(0, limit.value() - admissions.tokensUsed(org.id())),
        admissions.resetSeconds());
  }

  /**
   * Takes a concurrency slot (or the one {@code atDoor} holds), reserves the request's tokens of
   * the hour and what it may cost against its budgets, or refuses with 429: the organization
   * already has its configuration's number of requests in flight, what is left of the hour's
   * tokens cannot hold the request's prompt and least reply, or a budget covering it cannot hold
   * what it may cost ({@code budget_exceeded}).
   */
  public Permit admit(
      Principal caller,
      Optional<InferenceDoor.Pass> atDoor,
      TokenDemand demand,
      Spending spending) {
    Organization org = caller.organization();
    Limit hourly = org.plan().limits().tokensPerHour();
    long hourlyLimit = hourly.isUnlimited() ? -1 : hourly.value();
    Admissions.Entry entry = atDoor
        .filter(AtDoor.class::isInstance)
        .map(pass -> ((AtDoor) pass).entry())
        .orElse(null);
    // A request let in at the door holds its slot already: only its tokens are left to reserve.
    Admissions.Admission admission = entry != null && entry.holdsSlot()
        ? admissions.admit(entry, hourlyLimit, demand.need(), demand.want())
        : admissions.admit(
            org.id(), concurrencyLimit(org), hourlyLimit, demand.need(), demand.want());
    switch (admission.outcome()) {
      case TOO_MANY_IN_FLIGHT -> throw tooManyInFlight(concurrencyLimit(org));
      case OUT_OF_TOKENS ->
        throw ApiException.rateLimited(
            "tokens_per_hour_exceeded",
            "This request needs at least " + demand.need() + " tokens but "
                + admission.remaining() + " of the " + org.plan().id() + " plan's "
                + hourly.value() + " tokens per hour are left; the budget renews in "
                + admission.resetSeconds() + " seconds",
            admission.resetSeconds());
      case ADMITTED -> {}
    }
    Budgets.Hold held;
    try {
      held = spend.reserve(
          new Spender(org.id(), caller.credentialId(), spending.assistantId()),
          spending.mostNanos());
    } catch (RuntimeException refused) {
      admission.end(0);
      throw refused;
    }
    if (hourly.isUnlimited()) {
      return new Permit(admission, held, null, Long.MAX_VALUE, Long.MAX_VALUE);
    }
    // Within the grant, memory comes before the reply's longest length, as it does in the context.
    long beyondNeed = admission.granted() - demand.need();
    long memory = Math.min(demand.memoryCharged(), beyondNeed);
    long reply = demand.leastReply() + beyondNeed - memory;
    return new Permit(
        admission,
        held,
        new TokenBudget(hourly.value(), admission.remaining(), admission.resetSeconds()),
        demand.memoryHeldBy(memory),
        reply);
  }

  private static ApiException tooManyInFlight(long limit) {
    return ApiException.rateLimited(
        "concurrency_limit_exceeded",
        "This organization already has " + limit
            + " inference requests in flight, the most its configuration allows "
            + "(quotas.max_concurrent_requests); retry when one finishes",
        1);
  }

  long concurrencyLimit(Organization org) {
    return configs.effective(org).count(ConfigField.MAX_CONCURRENT_REQUESTS);
  }

  /** Where slots are counted (this node, or Redis): WebSocket connections are counted there too. */
  public ConcurrencySlots slots() {
    return slots;
  }

  /** Requests of the organization in flight on this node (for tests and metrics). */
  public int inFlight(String orgId) {
    return slots.heldHere(orgId);
  }
}
