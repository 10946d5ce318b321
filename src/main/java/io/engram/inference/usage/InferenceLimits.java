package io.engram.inference.usage;

import io.engram.access.Principal;
import io.engram.organizations.Limit;
import io.engram.organizations.Organization;
import io.engram.platform.http.ApiException;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The plan's inference limits, checked before any work: tokens per request (a 400: the request
 * can never pass), tokens per hour from real usage and concurrent requests (429s: retrying later
 * can pass). Requests per minute per key are applied earlier, by the guard. MAX_CONCURRENT_REQUESTS,
 * when set, replaces the plan's concurrency (the spec's precedence: instance variables over plan
 * defaults).
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
  private final OptionalInt concurrencyOverride;
  private final Map<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();

  public InferenceLimits(UsageLedger usage, OptionalInt concurrencyOverride) {
    this.usage = usage;
    this.concurrencyOverride = concurrencyOverride;
  }

  /** The most tokens one request may ask for on this organization's plan; null when unlimited. */
  public static Long tokensPerRequest(Organization org) {
    Limit limit = org.plan().limits().tokensPerRequest();
    return limit.isUnlimited() ? null : limit.value();
  }

  public void checkTokensPerRequest(Organization org, int maxTokens, String param) {
    Long limit = tokensPerRequest(org);
    if (limit != null && maxTokens > limit) {
      throw ApiException.badRequest(
          param,
          "'" + param + "' is " + maxTokens + " but the " + org.plan().id()
              + " plan allows at most " + limit + " tokens per request");
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
    AtomicInteger count = inFlight.computeIfAbsent(org.id(), id -> new AtomicInteger());
    if (count.incrementAndGet() > limit) {
      count.decrementAndGet();
      throw ApiException.rateLimited(
          "concurrency_limit_exceeded",
          "This organization already has " + limit
              + " inference requests in flight, the most its plan allows; retry when one finishes",
          1);
    }
    return count::decrementAndGet;
  }

  long concurrencyLimit(Organization org) {
    if (concurrencyOverride.isPresent()) {
      return concurrencyOverride.getAsInt();
    }
    Limit limit = org.plan().limits().concurrentRequests();
    return limit.isUnlimited() ? Long.MAX_VALUE : limit.value();
  }

  /** Requests in flight for the organization (for tests and metrics). */
  public int inFlight(String orgId) {
    AtomicInteger count = inFlight.get(orgId);
    return count == null ? 0 : count.get();
  }
}
