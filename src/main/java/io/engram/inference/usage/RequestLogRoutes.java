package io.engram.inference.usage;

import io.engram.access.Requires;
import io.engram.organizations.OrganizationStore;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.QueryParams;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.engram.platform.json.Json;
import io.javalin.http.Context;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The request log of an organization, for the operator and the organization's admins: {@code GET
 * /v1/organizations/{org_id}/requests} (newest first, filtered, a cursor to the next page) and
 * {@code …/requests/{request_id}} (one request's whole story, the id its response's X-Request-Id
 * gave; with its messages and answer when the organization keeps them).
 */
public final class RequestLogRoutes implements RouteModule {
  private static final String REQUESTS = "/v1/organizations/{org_id}/requests";

  private final RequestLog log;
  private final OrganizationStore organizations;

  public RequestLogRoutes(RequestLog log, OrganizationStore organizations) {
    this.log = log;
    this.organizations = organizations;
  }

  @Override
  public void register(Routes routes) {
    routes
        .get(REQUESTS, Requires.organizationAdmin(), this::list)
        .get(
            REQUESTS + "/{request_id}",
            Requires.organizationAdmin(),
            ctx -> Responses.json(
                ctx,
                view(
                    log.find(orgId(ctx), ctx.pathParam("request_id"))
                        .orElseThrow(
                            () -> ApiException.notFound("This organization has no request '"
                                + ctx.pathParam("request_id") + "' in its log")),
                    true)));
  }

  private void list(Context ctx) {
    String orgId = orgId(ctx);
    int limit = QueryParams.integer(ctx, "limit", 50, 1, 500);
    Long status = QueryParams.longValue(ctx, "status", 100, 599);
    String cache = ctx.queryParam("cache");
    if (cache != null && !cache.equals("hit") && !cache.equals("miss")) {
      throw ApiException.badRequest("cache", "'cache' is hit or miss, not '" + cache + "'");
    }
    RequestLogStore.Filter filter = new RequestLogStore.Filter(
        ctx.queryParam("model"),
        status == null ? null : status.intValue(),
        ctx.queryParam("credential_id"),
        ctx.queryParam("error_code"),
        cache,
        millis(ctx, "since"),
        millis(ctx, "until"),
        ctx.queryParam("guardrail_id"));
    // One more than asked says whether another page follows.
    List<RequestRecord> found = log.list(orgId, filter, ctx.queryParam("after"), limit + 1);
    boolean more = found.size() > limit;
    List<RequestRecord> page = more ? found.subList(0, limit) : found;
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("object", "list");
    body.put("data", page.stream().map(r -> view(r, false)).toList());
    body.put("has_more", more);
    body.put("next_cursor", more ? page.getLast().who().id() : null);
    Responses.json(ctx, body);
  }

  private static Long millis(Context ctx, String name) {
    return ctx.queryParam(name) == null ? null : QueryParams.instant(ctx, name).toEpochMilli();
  }

  private String orgId(Context ctx) {
    String orgId = ctx.pathParam("org_id");
    organizations.find(orgId).orElseThrow(() -> ApiException.notFound("Organization not found"));
    return orgId;
  }

  static Map<String, Object> view(RequestRecord r, boolean whole) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("id", r.who().id());
    view.put("object", "request");
    view.put("created_at", r.who().at() / 1000);
    view.put("route", r.who().route());
    view.put("credential_id", r.who().credentialId());
    view.put("assistant_id", r.who().assistantId());
    view.put("agent", r.who().agent());
    view.put("model", r.who().model());
    view.put("deployment", r.deployment());
    view.put("attempts", r.attempts());
    view.put("status", r.status());
    view.put("error_code", r.errorCode());
    Map<String, Object> latency = new LinkedHashMap<>();
    latency.put("queue", r.queueMs());
    latency.put("first_token", r.firstTokenMs());
    latency.put("total", r.totalMs());
    view.put("latency_ms", latency);
    view.put("prompt_tokens", r.promptTokens());
    view.put("completion_tokens", r.completionTokens());
    view.put("memory_tokens", r.memoryTokens());
    view.put("cost_usd", r.costNanos() / 1e9);
    view.put("cache", r.cache());
    List<Map<String, Object>> memories = new ArrayList<>();
    r.memories().forEach(m -> memories.add(Map.of("id", m.id(), "score", m.score())));
    view.put("memories", memories);
    List<Map<String, Object>> guardrails = new ArrayList<>();
    r.guardrails()
        .forEach(g -> guardrails.add(Map.of(
            "guardrail_id", g.guardrailId(),
            "phase", g.phase(),
            "action", g.action(),
            "kinds", g.kinds())));
    view.put("guardrails", guardrails);
    view.put("memories_left_out", r.memoriesLeftOut());
    if (whole) {
      view.put("messages", messages(r.messages()));
      view.put("answer", r.answer());
    }
    return view;
  }

  /**
   * The kept messages as JSON (an array of the client's messages); a record written before they
   * were kept in that shape, or one that does not parse, as the text it holds.
   */
  private static Object messages(String kept) {
    if (kept == null) {
      return null;
    }
    try {
      return Json.read(kept, com.fasterxml.jackson.databind.JsonNode.class);
    } catch (RuntimeException e) {
      return kept;
    }
  }
}
