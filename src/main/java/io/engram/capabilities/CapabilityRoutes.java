package io.engram.capabilities;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.access.Access;
import io.engram.access.Principal;
import io.engram.access.Requires;
import io.engram.organizations.Organization;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.EntityTags;
import io.engram.platform.http.HttpServer;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.QueryParams;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.javalin.http.Context;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The four routes of the capabilities spec, plus the history of an assistant's capability sets.
 * Field names and groupings follow the spec's table; docs/capabilities.md records every choice
 * the spec leaves open.
 */
public final class CapabilityRoutes implements RouteModule {
  private static final String CAPABILITIES = AssistantRoutes.ASSISTANT + "/capabilities";

  private final AssistantService assistants;
  private final long maxBodyBytes;

  public CapabilityRoutes(AssistantService assistants, long maxBodyBytes) {
    this.assistants = assistants;
    this.maxBodyBytes = maxBodyBytes;
  }

  @Override
  public void register(Routes routes) {
    routes.exposeHeaders("ETag");
    routes
        .get("/api/capabilities/registry", Requires.signedIn(), this::registry)
        .get(CAPABILITIES, Requires.signedIn(), this::current)
        .patch(CAPABILITIES, Requires.signedIn(), this::update)
        .get(CAPABILITIES + "/history", Requires.signedIn(), this::history)
        .get(
            AssistantRoutes.ASSISTANT + "/available-capabilities",
            Requires.signedIn(),
            this::available)
        .post(CAPABILITIES + "/{capabilityId}/execute", Requires.signedIn(), this::execute);
  }

  private void registry(Context ctx) {
    String typeFilter = ctx.queryParam("assistantType");
    AssistantType type = typeFilter == null
        ? null
        : AssistantType.fromFilter(typeFilter)
            .orElseThrow(() -> ApiException.badRequest(
                "assistantType",
                "'assistantType' must be org_shared, employee_personal or "
                    + "organization_wide (the same as org_shared)"));
    String categoryFilter = ctx.queryParam("category");
    CapabilityCategory category = categoryFilter == null
        ? null
        : CapabilityCategory.fromId(categoryFilter)
            .orElseThrow(() -> ApiException.badRequest(
                "category",
                "'category' must be one of "
                    + Arrays.stream(CapabilityCategory.values())
                        .map(CapabilityCategory::id)
                        .collect(Collectors.joining(", "))));
    String orgId = Access.caller(ctx).orgId();
    List<Capability> matching = assistants.registry().all().stream()
        .filter(c -> type == null || c.scope().allows(type))
        .filter(c -> category == null || c.category() == category)
        .map(c -> assistants.executable(orgId, c) == c.executable() ? c : c.executableHere())
        .toList();
    Map<String, Object> grouped = new LinkedHashMap<>();
    for (CapabilityScope scope : CapabilityScope.values()) {
      grouped.put(
          scope.id(),
          CapabilityViews.registryEntries(
              matching.stream().filter(c -> c.scope() == scope).toList()));
    }
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("success", true);
    body.put("capabilities", CapabilityViews.registryEntries(matching));
    body.put("grouped", grouped);
    body.put("total", matching.size());
    Responses.json(ctx, body);
  }

  /** The current set, or with {@code ?at=} the set that was in force at that time. */
  private void current(Context ctx) {
    Principal caller = Access.caller(ctx);
    String id = ctx.pathParam("assistantId");
    Instant at = QueryParams.instant(ctx, "at");
    CapabilitySet set;
    long version;
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("success", true);
    if (at == null) {
      Assistant assistant = assistants.get(caller, id);
      set = assistant.capabilities();
      version = assistant.version();
      ctx.header("ETag", EntityTags.of(version));
    } else {
      CapabilityVersion inForce = assistants.inForceAt(caller, id, at);
      set = inForce.set();
      version = inForce.version();
    }
    body.put("capabilities", set.capabilities());
    body.put("capabilityCount", set.capabilities().size());
    body.put("capabilityConfigs", set.configsJson());
    body.put("version", version);
    Responses.json(ctx, body);
  }

  private void update(Context ctx) {
    Principal caller = Access.caller(ctx);
    Assistant updated = assistants.replaceCapabilities(
        caller,
        ctx.pathParam("assistantId"),
        () -> CapabilityChange.parse(JsonBody.parse(ctx, maxBodyBytes)),
        ctx.header("If-Match"),
        HttpServer.requestId(ctx));
    AssistantRoutes.respond(
        ctx,
        200,
        updated,
        Map.of(
            "message",
            "Capabilities of assistant " + updated.name() + " updated to version "
                + updated.version() + "; they apply to new messages"));
  }

  private void history(Context ctx) {
    Principal caller = Access.caller(ctx);
    String id = ctx.pathParam("assistantId");
    int limit = QueryParams.integer(ctx, "limit", 20, 1, 100);
    Long before = QueryParams.longValue(ctx, "before", 1, Long.MAX_VALUE);
    // One row more than the page: the set the page's oldest version replaced.
    List<CapabilityVersion> rows =
        assistants.history(caller, id, before == null ? Long.MAX_VALUE : before, limit + 1);
    List<Map<String, Object>> page = new ArrayList<>();
    for (int i = 0; i < Math.min(limit, rows.size()); i++) {
      page.add(AssistantViews.version(rows.get(i), i + 1 < rows.size() ? rows.get(i + 1) : null));
    }
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("success", true);
    body.put("assistantId", id);
    body.put("history", page);
    body.put("nextBefore", rows.size() > limit ? rows.get(limit - 1).version() : null);
    Responses.json(ctx, body);
  }

  /** Runs an executable capability: {@code {arguments?: object}} in, {@code {result}} out. */
  private void execute(Context ctx) {
    Principal caller = Access.caller(ctx);
    String assistantId = ctx.pathParam("assistantId");
    String capabilityId = ctx.pathParam("capabilityId");
    JsonNode result = assistants.execute(
        caller,
        assistantId,
        capabilityId,
        () -> {
          JsonNode arguments = JsonBody.parse(ctx, maxBodyBytes)
              .allowOnly(Set.of("arguments"))
              .rawNotNull("arguments");
          if (arguments != null && !arguments.isObject()) {
            throw ApiException.badRequest("arguments", "'arguments' must be an object");
          }
          return arguments;
        },
        io.engram.platform.http.HttpServer.requestId(ctx));
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("success", true);
    body.put("assistantId", assistantId);
    body.put("capabilityId", capabilityId);
    body.put("result", result);
    Responses.json(ctx, body);
  }

  private void available(Context ctx) {
    Principal caller = Access.caller(ctx);
    Assistant assistant = assistants.get(caller, ctx.pathParam("assistantId"));
    Organization org = caller.organization();
    List<Capability> available = assistants.registry().all().stream()
        .filter(c -> c.scope().allows(assistant.type()))
        .filter(c -> org.plan().tier().atLeast(c.tierRequirement()))
        .toList();
    Map<String, Object> grouped = new LinkedHashMap<>();
    for (CapabilityCategory category : CapabilityCategory.values()) {
      grouped.put(
          category.id(),
          CapabilityViews.availableEntries(
              available.stream().filter(c -> c.category() == category).toList()));
    }
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("success", true);
    body.put("capabilities", CapabilityViews.availableEntries(available));
    body.put("grouped", grouped);
    body.put("organizationTier", org.plan().tier().id());
    body.put("currentCapabilities", assistant.capabilities().capabilities());
    body.put("capabilityLimit", org.plan().limits().capabilityCount());
    Responses.json(ctx, body);
  }
}
