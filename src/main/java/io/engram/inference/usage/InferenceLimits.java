package io.engram.inference.usage;

import io.engram.access.Principal;
import io.engram.organizations.Limit;
import io.engram.organizations.Organization;
import io.engram.platform.http.ApiException;
import io.engram.platform.ratelimit.ConcurrencySlots;
import io.engram.settings.ConfigField;
import io.engram.settings.EffectiveConfig;
import io.engram.settings.OrganizationConfigs;

/**
 * The inference limits, checked before any work: tokens per request (a 400: the request can never
 * pass), tokens per hour from real usage and concurrent requests (429s: retrying later can pass).
 * Tokens per request and concurrency are the organization's configuration in force ({@link
 * EffectiveConfig}: plan, the organization's own setting, the instance's MAX_CONCURRENT_REQUESTS);
 * tokens per hour is the plan's. Requests per minute per key are applied earlier, by the guard.
 */
public final class InferenceLimits {

  /** A granted request slot; closing it gives the slot back. */
  public interface Permit extends AutoCloseable {
    @Override
    void close();
  }

  /** What the caller learns about its token budget, for the x-ratelimit-*-tokens headers. */
  public record TokenBudget(long limit, long remaining, long resetSeconds) {}

  private final UsageLedger usage;
  private final OrganizationConfigs configs;
  private final ConcurrencySlots slots;

  public InferenceLimits(UsageLedger usage, OrganizationConfigs configs) {
    this(usage, configs, ConcurrencySlots.local());
  }

  /** @param slots where requests in flight are counted: this node's, or shared through Redis */
  public InferenceLimits(UsageLedger usage, OrganizationConfigs configs, ConcurrencySlots slots) {
    this.usage = usage;
    this.configs = configs;
    this.slots = slots;
  }

  /** The most tokens one request of this organization may ask for; MAX_VALUE when unlimited. */
  public long tokensPerRequest(Organization org) {
    return configs.effective(org).count(ConfigField.MAX_TOKENS_PER_REQUEST);
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

  /** The hourly budget left, or null when the plan has none. */
  public TokenBudget tokenBudget(Organization org) {
    Limit limit = org.plan().limits().tokensPerHour();
    if (limit.isUnlimited()) {
      return null;
    }
    long used = usage.tokensThisHour(org.id());
    return new TokenBudget(
        limit.value(), Math.max(0, limit.value() - used), usage.secondsToNextHour());
  }

  /**
   * Takes a request slot, or refuses with 429: the hour's tokens are spent, or the organization
   * already has its plan's number of requests in flight.
   */
  public Permit admit(Principal caller, TokenBudget budget) {
    Organization org = caller.organization();
    if (budget != null && budget.remaining() <= 0) {
      throw ApiException.rateLimited(
          "tokens_per_hour_exceeded",
          "The " + org.plan().id() + " plan's "
              + budget.limit() + " tokens per hour are used up; the budget renews in "
              + budget.resetSeconds()
              + " seconds",
          budget.resetSeconds());
    }
    long limit = concurrencyLimit(org);
    ConcurrencySlots.Slot slot = slots
        .take(org.id(), limit)
        .orElseThrow(() -> ApiException.rateLimited(
            "concurrency_limit_exceeded",
            "This organization already has " + limit
                + " inference requests in flight, the most its configuration allows "
                + "(quotas.max_concurrent_requests); retry when one finishes",
            1));
    return slot::close;
  }

  long concurrencyLimit(Organization org) {
    return configs.effective(org).count(ConfigField.MAX_CONCURRENT_REQUESTS);
  }

  /** Requests of the organization in flight on this node (for tests and metrics). */
  public int inFlight(String orgId) {
    return slots.heldHere(orgId);
  }
}
