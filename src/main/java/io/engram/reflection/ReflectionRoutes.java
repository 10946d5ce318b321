package io.engram.reflection;

import io.engram.access.Access;
import io.engram.access.Principal;
import io.engram.access.Requires;
import io.engram.access.Scope;
import io.engram.memory.MemoryState;
import io.engram.platform.WireNames;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.HttpServer;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.QueryParams;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.javalin.http.Context;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * /api/memory/reflection: settings, what runs did (events, audits), metrics, starting a run and
 * undoing changes. Reading needs a session or API key of the organization, or a context access
 * token with memory:read; running and undoing need an owner or admin (session or admin API key) or
 * a token with memory:control; changing settings needs an owner or admin. Tokens bound to agents
 * are refused: reflection spans every agent.
 */
public final class ReflectionRoutes implements RouteModule {
  static final String BASE = "/api/memory/reflection";
  static final int AUDIT_CHANGES_IN_LIST = 100;
  static final int AUDIT_CHANGES_IN_ONE = 1_000;

  private final ReflectionService reflection;
  private final ReflectionReport report;
  private final long maxBodyBytes;

  public ReflectionRoutes(
      ReflectionService reflection, ReflectionReport report, long maxBodyBytes) {
    this.reflection = reflection;
    this.report = report;
    this.maxBodyBytes = maxBodyBytes;
  }

  @Override
  public void register(Routes routes) {
    routes
        .get(
            BASE + "/settings",
            Requires.organizationWide(Scope.MEMORY_READ),
            ctx -> settings(ctx, reader(ctx), null))
        .patch(BASE + "/settings", Requires.organizationWide(Scope.MEMORY_CONTROL), ctx -> {
          Principal caller = Access.caller(ctx);
          requireAdmin(caller, "change reflection settings");
          JsonBody body = JsonBody.parse(ctx, maxBodyBytes);
          reflection.updateSettings(caller, body.node());
          settings(ctx, caller, "Reflection settings updated");
        })
        .get(BASE + "/events", Requires.organizationWide(Scope.MEMORY_READ), this::events)
        .get(BASE + "/events/{event_id}", Requires.organizationWide(Scope.MEMORY_READ), ctx -> {
          Principal caller = reader(ctx);
          ReflectionEvent event = reflection.event(caller, ctx.pathParam("event_id"));
          Responses.json(ctx, Map.of("success", true, "event", ReflectionViews.event(event)));
        })
        .get(BASE + "/audits", Requires.organizationWide(Scope.MEMORY_READ), this::audits)
        .get(BASE + "/audits/{run_id}", Requires.organizationWide(Scope.MEMORY_READ), ctx -> {
          Principal caller = reader(ctx);
          ReflectionRun run = reflection.run(caller, ctx.pathParam("run_id"));
          Responses.json(
              ctx,
              Map.of(
                  "success",
                  true,
                  "audit",
                  ReflectionViews.audit(
                      run,
                      reflection.runEvents(run, AUDIT_CHANGES_IN_ONE + 1),
                      AUDIT_CHANGES_IN_ONE)));
        })
        .get(
            BASE + "/metrics",
            Requires.organizationWide(Scope.MEMORY_READ),
            ctx -> Responses.json(
                ctx,
                Map.of("success", true, "metrics", report.current(reader(ctx).orgId()))))
        .get(
            BASE + "/metrics/summary",
            Requires.organizationWide(Scope.MEMORY_READ, Scope.INSIGHTS_READ),
            ctx -> {
              Principal caller = reader(ctx);
              Duration window =
                  ReflectionReport.span("window", ctx.queryParam("window"), Duration.ofDays(30));
              Map<String, Object> summary = new LinkedHashMap<>();
              summary.put(
                  "window", ctx.queryParamAsClass("window", String.class).getOrDefault("30d"));
              summary.putAll(report.summary(caller.orgId(), window));
              Responses.json(ctx, Map.of("success", true, "summary", summary));
            })
        .get(
            BASE + "/metrics/trend",
            Requires.organizationWide(Scope.MEMORY_READ, Scope.INSIGHTS_READ),
            ctx -> {
              Principal caller = reader(ctx);
              Duration window =
                  ReflectionReport.span("window", ctx.queryParam("window"), Duration.ofDays(7));
              Duration bucket = ReflectionReport.span(
                  "bucket",
                  ctx.queryParam("bucket"),
                  window.compareTo(Duration.ofDays(2)) <= 0
                      ? Duration.ofHours(1)
                      : Duration.ofDays(1));
              Responses.json(
                  ctx,
                  Map.of("success", true, "trend", report.trend(caller.orgId(), window, bucket)));
            })
        .get(
            BASE + "/metrics/distribution",
            Requires.organizationWide(Scope.MEMORY_READ, Scope.INSIGHTS_READ),
            ctx -> {
              Principal caller = reader(ctx);
              String raw = ctx.queryParamAsClass("state", String.class).getOrDefault("durable");
              MemoryState state = raw.equals("all")
                  ? null
                  : MemoryState.fromId(raw)
                      .orElseThrow(() -> ApiException.badRequest(
                          "state",
                          "'state' must be candidate, durable, suppressed, tombstoned or all"));
              Responses.json(
                  ctx,
                  Map.of(
                      "success", true, "distribution", report.distribution(caller.orgId(), state)));
            })
        .post(BASE + "/run", Requires.organizationWide(Scope.MEMORY_CONTROL), this::run)
        .post(BASE + "/undo", Requires.organizationWide(Scope.MEMORY_CONTROL), this::undo);
  }

  /** The caller of a read route (declared {@code organizationWide(MEMORY_READ)}). */
  private static Principal reader(Context ctx) {
    return Access.caller(ctx);
  }

  private static void requireAdmin(Principal caller, String what) {
    if (!caller.managesOrganization()) {
      throw ApiException.forbidden(
          "insufficient_permissions",
          "Only an organization owner or admin (or an admin " + "API key) may " + what);
    }
  }

  /** Running and undoing: owners and admins, or automation holding memory:control. */
  private Principal operator(Context ctx, String what) {
    Principal caller = Access.caller(ctx);
    if (caller.kind() != Principal.Kind.CONTEXT_TOKEN) {
      requireAdmin(caller, what);
    }
    return caller;
  }

  private void settings(Context ctx, Principal caller, String message) {
    ReflectionSettings settings = reflection.settings(caller.orgId());
    Instant next = reflection.nextRunAt(caller.orgId(), settings);
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("success", true);
    body.put("settings", settings.view());
    body.put("nextRunAt", next == null ? null : next.toString());
    if (message != null) {
      body.put("message", message);
    }
    Responses.json(ctx, body);
  }

  private void events(Context ctx) {
    Principal caller = reader(ctx);
    String kind = ctx.queryParam("kind");
    String change = ctx.queryParam("change");
    ReflectionStore.EventFilter filter = new ReflectionStore.EventFilter(
        ctx.queryParam("run"),
        kind == null
            ? null
            : ReflectionProcess.fromId(kind)
                .orElseThrow(() -> ApiException.badRequest(
                    "kind", "'kind' must be one of " + ids(ReflectionProcess.values()))),
        change == null
            ? null
            : ChangeKind.fromId(change)
                .orElseThrow(() -> ApiException.badRequest(
                    "change", "'change' must be one of " + ids(ChangeKind.values()))),
        ctx.queryParam("memory"),
        QueryParams.instant(ctx, "since"),
        QueryParams.instant(ctx, "until"));
    int limit = QueryParams.integer(ctx, "limit", 100, 1, 500);
    Long cursor = QueryParams.longValue(ctx, "cursor", 0, Long.MAX_VALUE);
    List<ReflectionEvent> page =
        reflection.events(caller, filter, cursor == null ? 0 : cursor, limit + 1);
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("success", true);
    body.put("events", page.stream().limit(limit).map(ReflectionViews::event).toList());
    body.put(
        "nextCursor", page.size() > limit ? String.valueOf(page.get(limit - 1).seq()) : null);
    Responses.json(ctx, body);
  }

  private void audits(Context ctx) {
    Principal caller = reader(ctx);
    Instant since = QueryParams.instant(ctx, "since");
    Instant until = QueryParams.instant(ctx, "until");
    int limit = QueryParams.integer(ctx, "limit", 20, 1, 100);
    List<ReflectionRun> page = reflection.runs(
        caller,
        since == null ? Instant.EPOCH : since,
        until == null ? Instant.parse("9999-12-31T23:59:59Z") : until,
        ctx.queryParam("cursor"),
        limit + 1);
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("success", true);
    body.put(
        "audits",
        page.stream()
            .limit(limit)
            .map(run -> ReflectionViews.audit(
                run, reflection.runEvents(run, AUDIT_CHANGES_IN_LIST + 1), AUDIT_CHANGES_IN_LIST))
            .toList());
    body.put("nextCursor", page.size() > limit ? page.get(limit - 1).id() : null);
    Responses.json(ctx, body);
  }

  private void run(Context ctx) {
    Principal caller = operator(ctx, "start a reflection run");
    // The body is optional: an empty POST starts a full run.
    boolean empty =
        ctx.req().getContentLengthLong() <= 0 && ctx.header("Transfer-Encoding") == null;
    JsonBody body =
        empty ? null : JsonBody.parse(ctx, maxBodyBytes).allowOnly(Set.of("dryRun", "processes"));
    boolean dryRun = body != null && body.optionalBoolean("dryRun").orElse(false);
    Set<ReflectionProcess> processes = EnumSet.allOf(ReflectionProcess.class);
    if (body != null && body.has("processes")) {
      List<String> ids = body.optionalStringList("processes", ReflectionProcess.values().length, 64)
          .orElseThrow();
      if (ids.isEmpty()) {
        throw ApiException.badRequest("processes", "'processes' must name at least one process");
      }
      processes = EnumSet.noneOf(ReflectionProcess.class);
      for (String id : ids) {
        processes.add(ReflectionProcess.fromId(id)
            .orElseThrow(() -> ApiException.badRequest(
                "processes",
                "'processes' may contain " + ids(ReflectionProcess.values()) + "; got '" + id
                    + "'")));
      }
    }
    ReflectionRun run = reflection.start(caller, dryRun, processes, HttpServer.requestId(ctx));
    ctx.header("Location", BASE + "/audits/" + run.id());
    Map<String, Object> response = new LinkedHashMap<>();
    response.put("success", true);
    response.put("runId", run.id());
    response.put("run", ReflectionViews.audit(run, null, 0));
    response.put(
        "message",
        (dryRun ? "Dry run" : "Reflection run") + " started; follow it at " + BASE + "/audits/"
            + run.id());
    Responses.json(ctx, 202, response);
  }

  private void undo(Context ctx) {
    Principal caller = operator(ctx, "undo reflection changes");
    JsonBody body =
        JsonBody.parse(ctx, maxBodyBytes).allowOnly(Set.of("runId", "eventId", "reason"));
    String runId = body.optionalString("runId", 64).orElse(null);
    String eventId = body.optionalString("eventId", 64).orElse(null);
    String reason = body.optionalString("reason", 1_000).orElse(null);
    if ((runId == null) == (eventId == null)) {
      throw ApiException.badRequest(
          runId == null ? "runId" : "eventId",
          "Send exactly one of 'runId' (undo a whole run) and 'eventId' (undo one change)");
    }
    ReflectionService.Undone undone = runId != null
        ? reflection.undoRun(caller, runId, reason, HttpServer.requestId(ctx))
        : reflection.undoEvent(caller, eventId, reason, HttpServer.requestId(ctx));
    Map<String, Object> response = new LinkedHashMap<>();
    response.put("success", true);
    response.put("undone", undone.undone());
    response.put("skipped", undone.skipped());
    response.put(
        "message",
        "Undid " + undone.undone().size() + " change(s)"
            + (undone.skipped().isEmpty()
                ? ""
                : "; " + undone.skipped().size() + " could not be undone (see skipped)"));
    Responses.json(ctx, response);
  }

  private static String ids(Enum<?>[] values) {
    return String.join(", ", Arrays.stream(values).map(WireNames::of).toList());
  }
}
