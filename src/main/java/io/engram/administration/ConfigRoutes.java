package io.engram.administration;

import io.engram.access.ManagedOrganization;
import io.engram.access.Requires;
import io.engram.organizations.AuditLog;
import io.engram.platform.http.HttpServer;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.QueryParams;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.engram.settings.EffectiveConfig;
import io.engram.settings.OrganizationConfigs;
import io.javalin.http.Context;
import java.util.Map;
import java.util.function.Function;

/**
 * An organization's configuration ({@code GET} and {@code PATCH /config}) and the audit trail of
 * its settings, for the operator or an admin API key of the organization. The GET shows each
 * field's value in force, where it comes from and its bounds, and what the organization uses now
 * of each capped resource on this node.
 */
public final class ConfigRoutes implements RouteModule {
  private static final String ORG = "/v1/organizations/{org_id}";

  private final OrganizationConfigs configs;
  private final OrganizationService organizations;
  private final AuditLog audit;
  private final Function<String, Map<String, Integer>> inUse;
  private final long maxBodyBytes;

  /** @param inUse an organization's open connections, requests in flight and WebSockets now */
  public ConfigRoutes(
      OrganizationConfigs configs,
      OrganizationService organizations,
      AuditLog audit,
      Function<String, Map<String, Integer>> inUse,
      long maxBodyBytes) {
    this.configs = configs;
    this.organizations = organizations;
    this.audit = audit;
    this.inUse = inUse;
    this.maxBodyBytes = maxBodyBytes;
  }

  @Override
  public void register(Routes routes) {
    routes
        .get(ORG + "/config", Requires.organizationAdmin(), ctx -> {
          ManagedOrganization managed = ManagedOrganization.of(ctx);
          show(ctx, managed, configs.effective(managed.organization()));
        })
        .patch(ORG + "/config", Requires.organizationAdmin(), ctx -> {
          ManagedOrganization managed = ManagedOrganization.of(ctx);
          EffectiveConfig updated = configs.update(
              managed.organization(),
              JsonBody.parseMergePatch(ctx, maxBodyBytes),
              managed.principal().credentialId(),
              HttpServer.requestId(ctx));
          show(ctx, managed, updated);
        })
        .get(ORG + "/audit", Requires.organizationAdmin(), ctx -> {
          ManagedOrganization managed = ManagedOrganization.of(ctx);
          int limit = QueryParams.integer(ctx, "limit", 50, 1, 500);
          Responses.json(
              ctx, ConfigViews.audit(audit.list(managed.orgId(), ctx.queryParam("before"), limit)));
        });
  }

  private void show(Context ctx, ManagedOrganization managed, EffectiveConfig config) {
    Responses.json(
        ctx,
        ConfigViews.config(
            managed.organization(),
            config,
            configs.stored(managed.orgId()).overrides().version(),
            inUse.apply(managed.orgId())));
  }
}
