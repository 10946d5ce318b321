package io.engram.administration;

import io.engram.access.Access;
import io.engram.access.ManagedOrganization;
import io.engram.access.Principal;
import io.engram.access.Requires;
import io.engram.platform.http.HttpServer;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.engram.settings.EffectiveConfig;
import io.engram.settings.EnvViews;
import io.engram.settings.OrganizationConfigs;
import io.engram.settings.Variables;
import io.engram.settings.VariablesBody;
import io.javalin.http.Context;
import java.util.Map;

/**
 * An organization's environment variables: {@code GET/POST /env} and {@code DELETE /env/{name}}
 * (the organization layer: the operator or the organization's admin key), and the operator's
 * runtime overrides under {@code /env/overrides} (account key only), which outrank every other
 * layer.
 */
public final class EnvRoutes implements RouteModule {
  private static final String ENV = "/v1/organizations/{org_id}/env";

  private final OrganizationConfigs configs;
  private final OrganizationService organizations;
  private final long maxBodyBytes;

  public EnvRoutes(
      OrganizationConfigs configs, OrganizationService organizations, long maxBodyBytes) {
    this.configs = configs;
    this.organizations = organizations;
    this.maxBodyBytes = maxBodyBytes;
  }

  @Override
  public void register(Routes routes) {
    routes
        .get(ENV, Requires.organizationAdmin(), ctx -> {
          ManagedOrganization managed = ManagedOrganization.of(ctx);
          show(ctx, managed, configs.effective(managed.organization()));
        })
        .post(
            ENV,
            Requires.organizationAdmin(),
            ctx -> set(ctx, ManagedOrganization.of(ctx), Variables.Layer.ORGANIZATION))
        .delete(
            ENV + "/{VARIABLE_NAME}",
            Requires.organizationAdmin(),
            ctx -> delete(ctx, ManagedOrganization.of(ctx), Variables.Layer.ORGANIZATION))
        .post(
            ENV + "/overrides",
            Requires.account(),
            ctx -> set(ctx, operator(ctx), Variables.Layer.RUNTIME))
        .delete(
            ENV + "/overrides/{VARIABLE_NAME}",
            Requires.account(),
            ctx -> delete(ctx, operator(ctx), Variables.Layer.RUNTIME));
  }

  /** Runtime overrides are the operator's: an account key, and an organization that exists. */
  private ManagedOrganization operator(Context ctx) {
    Principal principal = Access.caller(ctx);
    return new ManagedOrganization(principal, organizations.get(ctx.pathParam("org_id")));
  }

  private void set(Context ctx, ManagedOrganization managed, Variables.Layer layer) {
    Map<String, String> values = VariablesBody.read(ctx, maxBodyBytes);
    show(
        ctx,
        managed,
        configs.setVariables(
            managed.organization(),
            layer,
            values,
            managed.principal().credentialId(),
            HttpServer.requestId(ctx)));
  }

  private void delete(Context ctx, ManagedOrganization managed, Variables.Layer layer) {
    show(
        ctx,
        managed,
        configs.deleteVariable(
            managed.organization(),
            layer,
            ctx.pathParam("VARIABLE_NAME"),
            managed.principal().credentialId(),
            HttpServer.requestId(ctx)));
  }

  private void show(Context ctx, ManagedOrganization managed, EffectiveConfig config) {
    Responses.json(
        ctx,
        EnvViews.list(
            managed.organization(),
            config,
            configs.stored(managed.orgId()).overrides().version()));
  }
}
