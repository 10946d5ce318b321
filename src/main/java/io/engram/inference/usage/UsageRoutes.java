package io.engram.inference.usage;

import io.engram.access.RequestWindows;
import io.engram.access.Requires;
import io.engram.budgets.BudgetViews;
import io.engram.organizations.Organization;
import io.engram.organizations.OrganizationStore;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.QueryParams;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.javalin.http.Context;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * GET /v1/organizations/{org_id}/usage: the organization's inference usage by hour, credential
 * and model between {@code start} and {@code end} (default: the last 24 hours; at most 93 days),
 * with totals and the current hour's token budget. For the operator and the organization's admin keys.
 */
public final class UsageRoutes implements RouteModule {
  static final Duration DEFAULT_SPAN = Duration.ofHours(24);
  static final Duration MAX_SPAN = Duration.ofDays(93);
  /** Later instants do not fit in the milliseconds hours are stored in. */
  static final Instant LATEST = Instant.parse("9999-12-31T23:59:59Z");

  private final UsageLedger usage;
  private final InferenceLimits limits;
  private final RequestWindows windows;
  private final OrganizationStore organizations;
  private final Clock clock;

  public UsageRoutes(
      UsageLedger usage,
      InferenceLimits limits,
      RequestWindows windows,
      OrganizationStore organizations,
      Clock clock) {
    this.usage = usage;
    this.limits = limits;
    this.windows = windows;
    this.organizations = organizations;
    this.clock = clock;
  }

  @Override
  public void register(Routes routes) {
    routes.get("/v1/organizations/{org_id}/usage", Requires.organizationInsights(), this::usage);
  }

  private void usage(Context ctx) {
    String orgId = ctx.pathParam("org_id");
    Organization org = organizations
        .find(orgId)
        .orElseThrow(() -> ApiException.notFound("Organization not found"));
    Instant end = ctx.queryParam("end") == null ? clock.instant() : QueryParams.instant(ctx, "end");
    Instant start = ctx.queryParam("start") == null
        ? end.minus(DEFAULT_SPAN)
        : QueryParams.instant(ctx, "start");
    checkSpan(start, end);
    // Hours are whole: the hours that contain 'start' and 'end' are included.
    UsageReport report =
        usage.report(orgId, UsageLedger.hourStart(start.toEpochMilli()), end.toEpochMilli() + 1);
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("object", "list");
    body.put("organization_id", orgId);
    body.put("start", start.getEpochSecond());
    body.put("end", end.getEpochSecond());
    body.put("data", report.rows().stream().map(UsageRoutes::row).toList());
    body.put("totals", totals(report.totals()));
    body.put("latency", latency(report));
    body.put("current_hour", currentHour(org));
    body.put("budgets", limits.budgets(org).stream().map(BudgetViews::view).toList());
    body.put(
        "rate_limits", windows.headroom(org).stream().map(UsageRoutes::headroom).toList());
    Responses.json(ctx, body);
  }

  private static void checkSpan(Instant start, Instant end) {
    if (start.isBefore(Instant.EPOCH) || end.isAfter(LATEST)) {
      throw ApiException.badRequest(
          start.isBefore(Instant.EPOCH) ? "start" : "end",
          "'start' and 'end' must lie between 1970 and the year 9999");
    }
    if (!start.isBefore(end)) {
      throw ApiException.badRequest("start", "'start' must be earlier than 'end'");
    }
    if (Duration.between(start, end).compareTo(MAX_SPAN) > 0) {
      throw ApiException.badRequest(
          "start", "At most " + MAX_SPAN.toDays() + " days can be read at once");
    }
  }

  private static Map<String, Object> row(UsageStore.Row row) {
    Map<String, Object> item = new LinkedHashMap<>();
    item.put("hour_start", row.hourStart() / 1000);
    item.put("credential_id", row.credentialId());
    item.put("model", row.model());
    item.put("deployment", row.deployment().isEmpty() ? null : row.deployment());
    item.put("requests", row.requests());
    item.put("prompt_tokens", row.promptTokens());
    item.put("completion_tokens", row.completionTokens());
    item.put("total_tokens", row.totalTokens());
    item.put("memory_tokens", row.memoryTokens());
    item.put("errors", row.errors());
    item.put("cost_usd", dollars(row.costNanos()));
    item.put("cache_hits", row.cacheHits());
    return item;
  }

  /** Request durations: over the span, per model and per UTC day (percentiles in ms). */
  private static Map<String, Object> latency(UsageReport report) {
    Map<String, Object> view = new LinkedHashMap<>(percentiles(report.overall()));
    view.put(
        "by_model",
        report.byModel().entrySet().stream()
            .map(e -> {
              Map<String, Object> item = new LinkedHashMap<>();
              item.put("model", e.getKey());
              item.putAll(percentiles(e.getValue()));
              return item;
            })
            .toList());
    view.put(
        "by_day",
        report.byDay().entrySet().stream()
            .map(e -> {
              Map<String, Object> item = new LinkedHashMap<>();
              item.put("day_start", e.getKey() / 1000);
              item.putAll(percentiles(e.getValue()));
              return item;
            })
            .toList());
    return view;
  }

  private static Map<String, Object> headroom(RequestWindows.Headroom headroom) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("credential_id", headroom.credential().id());
    view.put("name", headroom.credential().name());
    view.put("kind", headroom.credential().kind().id());
    view.put("requests_per_minute", headroom.limitPerMinute());
    view.put("used_this_minute", headroom.usedThisMinute());
    view.put("remaining", Math.max(0, headroom.limitPerMinute() - headroom.usedThisMinute()));
    return view;
  }

  private static Map<String, Object> percentiles(UsageReport.Latency latency) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("requests", latency.requests());
    view.put("p50_ms", latency.p50());
    view.put("p90_ms", latency.p90());
    view.put("p99_ms", latency.p99());
    return view;
  }

  private static Map<String, Object> totals(UsageReport.Totals totals) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("requests", totals.requests());
    view.put("prompt_tokens", totals.promptTokens());
    view.put("completion_tokens", totals.completionTokens());
    view.put("total_tokens", totals.totalTokens());
    view.put("memory_tokens", totals.memoryTokens());
    view.put("errors", totals.errors());
    view.put("cost_usd", dollars(totals.costNanos()));
    view.put("cache_hits", totals.cacheHits());
    return view;
  }

  /** Billionths of a dollar as dollars. */
  private static double dollars(long nanos) {
    return nanos / 1e9;
  }

  private Map<String, Object> currentHour(Organization org) {
    InferenceLimits.TokenBudget budget = limits.tokenBudget(org);
    Map<String, Object> hour = new LinkedHashMap<>();
    hour.put("hour_start", usage.currentHourStart() / 1000);
    hour.put("tokens_used", usage.tokensThisHour(org.id()));
    hour.put("tokens_per_hour", budget == null ? null : budget.limit());
    hour.put("tokens_remaining", budget == null ? null : budget.remaining());
    hour.put("resets_in_seconds", usage.secondsToNextHour());
    return hour;
  }
}
