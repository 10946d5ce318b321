package io.engram.organizations;

import static io.engram.organizations.Limit.U;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The plan ids an organization may hold, each normalized into an ordered {@link Tier}, with all of
 * its limits in this one table. Columns: tier, capabilities per assistant, /api requests per
 * minute, concurrent requests, tokens per request, tokens per hour, storage GB, paid, open HTTP
 * connections and open WebSocket connections per organization.
 * {@code U} is unlimited. Values the spec leaves out (Founder and Free throughout, the middle
 * tiers' concurrency and token numbers) are chosen to sit between their neighbours; docs/plans.md
 * explains each choice.
 */
public enum Plan {
  //          tier            caps  rpm     conc   tok/req  tok/hour   storageGB  paid  conns  ws
  FOUNDER(Tier.FREE, 3, 30, 2, 2_048, 10_000, 1, false, 20, 5),
  FREE(Tier.FREE, 3, 30, 2, 1_024, 5_000, 1, false, 20, 5),
  SPARK(Tier.SPARK, 3, 60, 5, 2_048, 10_000, 10, true, 50, 10),
  SEED(Tier.SEED, 7, 200, 20, 4_096, 100_000, 50, true, 200, 50),
  RISE(Tier.RISE, 7, 200, 20, 4_096, 100_000, 100, true, 200, 50),
  GROWTH(Tier.GROWTH, U, 1000, 50, 8_192, 500_000, 150, true, 500, 200),
  BOOST(Tier.BOOST, U, 1000, 50, 8_192, 500_000, 200, true, 500, 200),
  SCALE(Tier.SCALE, U, 1000, 100, 8_192, U, 500, true, 1000, 500),
  GROW(Tier.GROW, U, 1000, 100, 8_192, U, 1_000, true, 1000, 500),
  EXPAND(Tier.EXPAND, U, 1000, 100, 8_192, U, 2_000, true, 1000, 500),
  PRIME(Tier.PRIME, U, 1000, 100, 8_192, U, 5_000, true, 1000, 500),
  PUBLIC(Tier.PUBLIC, U, 1000, 100, 8_192, U, 10_000, true, 1000, 500),
  ELITE(Tier.ELITE, U, 1000, 100, 8_192, U, 20_000, true, 1000, 500),
  TITAN(Tier.TITAN, U, 1000, 100, 8_192, U, 50_000, true, 1000, 500),
  GOD(Tier.GOD, U, 1000, 100, 8_192, U, U, true, 1000, 500),
  DEDICATED(Tier.DEDICATED, U, 10000, U, 16_384, U, U, true, U, U);

  private final Tier tier;
  private final PlanLimits limits;
  private final boolean paid;

  Plan(
      Tier tier,
      long capabilities,
      long requestsPerMinute,
      long concurrent,
      long tokensPerRequest,
      long tokensPerHour,
      long storageGb,
      boolean paid,
      long connections,
      long webSocketConnections) {
    this.tier = tier;
    this.paid = paid;
    this.limits = new PlanLimits(
        limit(capabilities),
        limit(requestsPerMinute),
        limit(concurrent),
        limit(tokensPerRequest),
        limit(tokensPerHour),
        limit(storageGb),
        limit(connections),
        limit(webSocketConnections));
  }

  private static Limit limit(long value) {
    return value == U ? Limit.UNLIMITED : Limit.of(value);
  }

  public String id() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * The plan's bandwidth in and out, in bytes per second (the spec's Spark 1 Gbps, Seed 10 Gbps;
   * Rise as Seed), enforced on the organization's connections with a burst of twice that for five
   * minutes; empty where the spec leaves it to the deployment (no limit).
   */
  public java.util.OptionalLong bandwidthBytesPerSecond() {
    long gbps = 1_000_000_000L / 8;
    return switch (tier) {
      case SPARK -> java.util.OptionalLong.of(gbps);
      case SEED, RISE -> java.util.OptionalLong.of(10 * gbps);
      default -> java.util.OptionalLong.empty();
    };
  }

  public Tier tier() {
    return tier;
  }

  public PlanLimits limits() {
    return limits;
  }

  /** Paid plans may switch memory to the candidate review path; Founder and Free may not. */
  public boolean isPaid() {
    return paid;
  }

  public static Optional<Plan> fromId(String id) {
    return Arrays.stream(values())
        .filter(p -> p.id().equalsIgnoreCase(id == null ? "" : id.trim()))
        .findFirst();
  }

  public static String allIds() {
    return Arrays.stream(values()).map(Plan::id).collect(Collectors.joining(", "));
  }
}
