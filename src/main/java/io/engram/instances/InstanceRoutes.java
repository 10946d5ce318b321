package io.engram.instances;

import io.engram.access.ManagedOrganization;
import io.engram.access.Requires;
import io.engram.instances.files.FileStore;
import io.engram.instances.storage.InstanceViews;
import io.engram.organizations.Instance;
import io.engram.organizations.InstanceStore;
import io.engram.organizations.Organization;
import io.engram.platform.VisibleText;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.HttpServer;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.engram.settings.EnvViews;
import io.engram.settings.OrganizationConfigs;
import io.engram.settings.VariablesBody;
import io.javalin.http.Context;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * An organization's instances ({@code /v1/organizations/{org_id}/instances}: create, list, get,
 * rename, make default, delete) and each instance's own routes under {@code /v1/nano/{nano_id}}:
 * the instance, its layer of environment variables (set values wait for a restart, as the spec
 * says dashboard changes do) and {@code POST /restart}, which puts them in force.
 */
public final class InstanceRoutes implements RouteModule {
  private static final String INSTANCES = "/v1/organizations/{org_id}/instances";
  private static final String NANO = "/v1/nano/{nano_id}";

  private final InstanceStore instances;
  private final FileStore files;
  private final OrganizationConfigs configs;
  private final long maxBodyBytes;

  public InstanceRoutes(
      InstanceStore instances, FileStore files, OrganizationConfigs configs, long maxBodyBytes) {
    this.instances = instances;
    this.files = files;
    this.configs = configs;
    this.maxBodyBytes = maxBodyBytes;
  }

  @Override
  public void register(Routes routes) {
    routes
        .post(INSTANCES, Requires.organizationAdmin(), this::create)
        .get(INSTANCES, Requires.organizationAdmin(), ctx -> {
          ManagedOrganization managed = managed(ctx);
          Responses.json(
              ctx,
              InstanceViews.page(
                  instances.list(managed.orgId()).stream()
                      .map(i -> view(managed.organization(), i))
                      .toList(),
                  null));
        })
        .get(INSTANCES + "/{nano_id}", Requires.organizationAdmin(), ctx -> {
          ManagedOrganization managed = managed(ctx);
          Responses.json(
              ctx,
              view(
                  managed.organization(),
                  instances.get(managed.orgId(), ctx.pathParam("nano_id"))));
        })
        .patch(INSTANCES + "/{nano_id}", Requires.organizationAdmin(), this::update)
        .delete(INSTANCES + "/{nano_id}", Requires.organizationAdmin(), ctx -> {
          ManagedOrganization managed = managed(ctx);
          Instance instance =
              instances.beginDelete(managed.orgId(), ctx.pathParam("nano_id"), by(ctx, managed));
          files.deleteInstance(instance.id());
          instances.purge(instance.id(), OrganizationConfigs::forgetInstance);
          ctx.status(204);
        })
        .get(NANO, InstanceAccess.admin(instances), ctx -> {
          InstanceAccess access = access(ctx);
          Responses.json(ctx, view(access.organization(), access.instance()));
        })
        .get(NANO + "/env", InstanceAccess.admin(instances), ctx -> showEnv(ctx, access(ctx)))
        .post(NANO + "/env", InstanceAccess.admin(instances), this::setEnv)
        .delete(NANO + "/env/{VARIABLE_NAME}", InstanceAccess.admin(instances), ctx -> {
          InstanceAccess access = access(ctx);
          configs.deleteInstanceVariable(
              access.organization(),
              access.instanceId(),
              ctx.pathParam("VARIABLE_NAME"),
              access.principal().credentialId(),
              HttpServer.requestId(ctx));
          showEnv(ctx, access);
        })
        .post(NANO + "/restart", InstanceAccess.admin(instances), ctx -> {
          InstanceAccess access = access(ctx);
          var before = configs.instanceLayer(access.organization(), access.instanceId());
          configs.restartInstance(
              access.organization(),
              access.instanceId(),
              access.principal().credentialId(),
              HttpServer.requestId(ctx));
          Map<String, Object> view = new LinkedHashMap<>(
              view(access.organization(), instances.get(access.orgId(), access.instanceId())));
          view.put("applied", before.pending().keySet());
          Responses.json(ctx, view);
        });
  }

  private void create(Context ctx) {
    ManagedOrganization managed = managed(ctx);
    JsonBody body = JsonBody.parse(ctx, maxBodyBytes);
    body.allowOnly(Set.of("name"));
    Instance instance = instances.create(
        managed.orgId(),
        name(body.requiredString("name", InstanceStore.MAX_NAME)),
        by(ctx, managed));
    Responses.json(ctx, 201, view(managed.organization(), instance));
  }

  private void update(Context ctx) {
    ManagedOrganization managed = managed(ctx);
    JsonBody body = JsonBody.parse(ctx, maxBodyBytes);
    body.allowOnly(Set.of("name", "default"));
    String name =
        body.optionalString("name", InstanceStore.MAX_NAME).map(this::name).orElse(null);
    Boolean makeDefault = body.optionalBoolean("default").orElse(null);
    if (Boolean.FALSE.equals(makeDefault)) {
      throw ApiException.badRequest(
          "default",
          "An organization always has a default instance: make another one the default instead");
    }
    if (name == null && makeDefault == null) {
      throw ApiException.badRequest("name", "Send 'name' and/or \"default\": true");
    }
    String id = ctx.pathParam("nano_id");
    boolean wasDefault = instances.get(managed.orgId(), id).isDefault();
    Instance instance =
        instances.update(managed.orgId(), id, name, makeDefault != null, by(ctx, managed));
    if (makeDefault != null && !wasDefault) {
      configs.defaultInstanceChanged(
          managed.organization(),
          id,
          managed.principal().credentialId(),
          HttpServer.requestId(ctx));
    }
    Responses.json(ctx, view(managed.organization(), instance));
  }

  private String name(String raw) {
    String name = raw.strip();
    if (VisibleText.isEmpty(name)) {
      throw ApiException.badRequest("name", "'name' must have visible characters");
    }
    return name;
  }

  private void setEnv(Context ctx) {
    InstanceAccess access = access(ctx);
    Map<String, String> values = VariablesBody.read(ctx, maxBodyBytes);
    configs.setInstanceVariables(
        access.organization(),
        access.instanceId(),
        values,
        access.principal().credentialId(),
        HttpServer.requestId(ctx));
    showEnv(ctx, access);
  }

  private void showEnv(Context ctx, InstanceAccess access) {
    OrganizationConfigs.InstanceLayer layer =
        configs.instanceLayer(access.organization(), access.instanceId());
    Responses.json(
        ctx,
        EnvViews.instance(
            access.organization(),
            access.instanceId(),
            layer.config(),
            layer.pending(),
            configs.stored(access.orgId()).overrides().version()));
  }

  private Map<String, Object> view(Organization org, Instance instance) {
    return InstanceViews.instance(
        instance, !configs.instanceLayer(org, instance.id()).pending().isEmpty());
  }

  private static InstanceStore.By by(Context ctx, ManagedOrganization managed) {
    return new InstanceStore.By(managed.principal().credentialId(), HttpServer.requestId(ctx));
  }

  private ManagedOrganization managed(Context ctx) {
    return ManagedOrganization.of(ctx);
  }

  private InstanceAccess access(Context ctx) {
    return InstanceAccess.of(ctx);
  }
}
