package io.engram.actions;

import io.engram.access.ManagedOrganization;
import io.engram.access.Requires;
import io.engram.capabilities.AssistantService;
import io.engram.capabilities.Capability;
import io.engram.capabilities.CapabilityRegistry;
import io.engram.capabilities.CapabilityVersion;
import io.engram.capabilities.ToolSchemas;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.QueryParams;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.engram.platform.json.Json;
import io.javalin.http.Context;
import java.util.Arrays;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * What an organization's admins (or the operator) manage of capabilities that act: the action
 * bridges that carry out capabilities in the organization's own systems, the audit of every
 * execution, and the approval queue ({@code requiresApproval}): approving carries the action out,
 * rejecting leaves it undone.
 */
public final class ActionRoutes implements RouteModule {
  private static final String ORG = "/v1/organizations/{org_id}";
  private static final String EXECUTIONS = ORG + "/capability-executions";

  private final ActionBridges bridges;
  private final CapabilityExecutor executor;
  private final CapabilityRegistry registry;
  private final AssistantService assistants;
  private final long maxBodyBytes;

  public ActionRoutes(
      ActionBridges bridges,
      CapabilityExecutor executor,
      AssistantService assistants,
      long maxBodyBytes) {
    this.bridges = bridges;
    this.executor = executor;
    this.registry = assistants.registry();
    this.assistants = assistants;
    this.maxBodyBytes = maxBodyBytes;
  }

  @Override
  public void register(Routes routes) {
    routes
        .post(ORG + "/action-bridges", Requires.organizationAdmin(), this::createBridge)
        .get(
            ORG + "/action-bridges",
            Requires.organizationAdmin(),
            ctx -> Responses.json(
                ctx,
                ActionViews.list(bridges.list(managed(ctx).orgId()).stream()
                    .map(bridge -> ActionViews.bridge(bridge, null))
                    .toList())))
        .delete(ORG + "/action-bridges/{bridge_id}", Requires.organizationAdmin(), ctx -> {
          bridges.delete(managed(ctx).orgId(), ctx.pathParam("bridge_id"));
          ctx.status(204);
        })
        .get(EXECUTIONS, Requires.organizationAdmin(), this::listExecutions)
        .get(
            EXECUTIONS + "/{execution_id}",
            Requires.organizationAdmin(),
            ctx -> Responses.json(
                ctx,
                ActionViews.execution(
                    executor.execution(managed(ctx).orgId(), ctx.pathParam("execution_id")))))
        .post(EXECUTIONS + "/{execution_id}/approve", Requires.organizationAdmin(), ctx -> {
          ManagedOrganization managed = managed(ctx);
          Execution pending = executor.execution(managed.orgId(), ctx.pathParam("execution_id"));
          CapabilityVersion asked = assistants
              .versionAt(managed.orgId(), pending.assistantId(), pending.createdAt())
              .orElseThrow(() -> ApiException.conflict(
                  "assistant_deleted",
                  "The assistant " + pending.assistantId() + " no longer exists; reject it"));
          Responses.json(
              ctx,
              ActionViews.execution(
                  executor.approve(managed.orgId(), managed.principal(), pending.id(), asked)));
        })
        .post(EXECUTIONS + "/{execution_id}/reject", Requires.organizationAdmin(), ctx -> {
          ManagedOrganization managed = managed(ctx);
          Responses.json(
              ctx,
              ActionViews.execution(executor.reject(
                  managed.orgId(), managed.principal(), ctx.pathParam("execution_id"))));
        });
  }

  private void createBridge(Context ctx) {
    ManagedOrganization managed = managed(ctx);
    JsonBody body = JsonBody.parse(ctx, maxBodyBytes);
    body.allowOnly(Set.of("capability", "url", "timeout_ms"));
    String capabilityId = body.requiredString("capability", 64);
    Capability capability = registry
        .find(capabilityId)
        .orElseThrow(() ->
            ApiException.badRequest("capability", "Unknown capability '" + capabilityId + "'"));
    if (registry.handler(capabilityId).isPresent()) {
      throw ApiException.badRequest(
          "capability",
          "Capability " + capability.label() + " is carried out by Engram itself; it takes no "
              + "bridge");
    }
    if (ToolSchemas.parameters(capabilityId, Json.MAPPER.createObjectNode()).isEmpty()) {
      throw ApiException.badRequest(
          "capability", "Capability " + capability.label() + " is not a tool: it takes no bridge");
    }
    int timeout = body.optionalInt("timeout_ms", 100, ActionBridges.MAX_TIMEOUT_MILLIS)
        .orElse(ActionBridges.DEFAULT_TIMEOUT_MILLIS);
    ActionBridges.Created created = bridges.create(
        managed.orgId(),
        capabilityId,
        body.requiredString("url", 4096),
        timeout,
        managed.principal().credentialId());
    Responses.json(ctx, 201, ActionViews.bridge(created.bridge(), created.secret()));
  }

  private void listExecutions(Context ctx) {
    String orgId = managed(ctx).orgId();
    Execution.Status status = Optional.ofNullable(ctx.queryParam("status"))
        .map(value -> Arrays.stream(Execution.Status.values())
            .filter(s -> s.wireName().equals(value))
            .findFirst()
            .orElseThrow(() -> ApiException.badRequest(
                "status",
                "'status' is one of "
                    + Arrays.stream(Execution.Status.values())
                        .map(Execution.Status::wireName)
                        .collect(Collectors.joining(", ")))))
        .orElse(null);
    Executions.Filter filter =
        new Executions.Filter(ctx.queryParam("assistant_id"), ctx.queryParam("capability"), status);
    int limit = QueryParams.integer(ctx, "limit", 50, 1, 500);
    Responses.json(
        ctx,
        ActionViews.list(
            executor.executions(orgId, filter, ctx.queryParam("before"), limit).stream()
                .map(ActionViews::execution)
                .toList()));
  }

  private ManagedOrganization managed(Context ctx) {
    return ManagedOrganization.of(ctx);
  }
}
