package io.engram.inference.routing;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.access.ManagedOrganization;
import io.engram.access.Permission;
import io.engram.access.Requirement;
import io.engram.access.Requires;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.engram.platform.json.Json;
import io.javalin.http.Context;
import java.util.List;
import java.util.function.Function;

/**
 * Providers and routed models over HTTP, for the server ({@code /v1/admin/...}: the operator) and
 * for one organization ({@code /v1/organizations/{org_id}/...}: its providers need an admin key or
 * an owner's or admin's session, since they hold keys; its models also a key with {@code
 * models}). Another organization's path answers 404; a provider's key and headers' values are
 * never shown.
 */
public final class RoutingRoutes implements RouteModule {
  private static final String SERVER = "/v1/admin";
  private static final String ORGANIZATION = "/v1/organizations/{org_id}";

  private final Routing routing;
  private final long maxBodyBytes;

  public RoutingRoutes(Routing routing, long maxBodyBytes) {
    this.routing = routing;
    this.maxBodyBytes = maxBodyBytes;
  }

  @Override
  public void register(Routes routes) {
    providers(routes, SERVER, Requires.account(), ctx -> RoutingStore.SERVER);
    providers(routes, ORGANIZATION, Requires.organizationAdmin(), this::organization);
    models(routes, SERVER, Requires.account(), ctx -> RoutingStore.SERVER);
    models(
        routes,
        ORGANIZATION,
        Requires.organizationPermission(Permission.MODELS),
        this::organization);
  }

  private String organization(Context ctx) {
    return ManagedOrganization.of(ctx).orgId();
  }

  private void providers(
      Routes routes, String base, Requirement who, Function<Context, String> scopeOf) {
    String one = base + "/providers/{provider_id}";
    routes
        .get(
            base + "/providers",
            who,
            ctx -> list(
                ctx,
                routing.providers(scopeOf.apply(ctx)).stream()
                    .map(Provider::view)
                    .toList()))
        .post(base + "/providers", who, ctx -> {
          String scope = scopeOf.apply(ctx);
          Responses.json(ctx, 201, routing.createProvider(scope, body(ctx)).view());
        })
        .get(
            one,
            who,
            ctx -> Responses.json(
                ctx,
                routing
                    .provider(scopeOf.apply(ctx), ctx.pathParam("provider_id"))
                    .view()))
        .patch(one, who, ctx -> {
          String scope = scopeOf.apply(ctx);
          Responses.json(
              ctx,
              routing
                  .updateProvider(scope, ctx.pathParam("provider_id"), body(ctx))
                  .view());
        })
        .delete(one, who, ctx -> {
          routing.deleteProvider(scopeOf.apply(ctx), ctx.pathParam("provider_id"));
          ctx.status(204);
        })
        .post(
            one + "/check",
            who,
            ctx -> Responses.json(
                ctx, routing.check(scopeOf.apply(ctx), ctx.pathParam("provider_id"))));
  }

  private void models(
      Routes routes, String base, Requirement who, Function<Context, String> scopeOf) {
    String one = base + "/models/{model_id}";
    routes
        .get(base + "/models", who, ctx -> list(ctx, routing.modelViews(scopeOf.apply(ctx))))
        .post(base + "/models", who, ctx -> {
          String scope = scopeOf.apply(ctx);
          Responses.json(ctx, 201, routing.createModel(scope, body(ctx)).view());
        })
        .get(
            one,
            who,
            ctx -> Responses.json(
                ctx, routing.modelView(scopeOf.apply(ctx), ctx.pathParam("model_id"))))
        .patch(one, who, ctx -> {
          String scope = scopeOf.apply(ctx);
          Responses.json(ctx, routing.updateModel(scope, ctx.pathParam("model_id"), body(ctx)));
        })
        .delete(one, who, ctx -> {
          routing.deleteModel(scopeOf.apply(ctx), ctx.pathParam("model_id"));
          ctx.status(204);
        });
  }

  private JsonBody body(Context ctx) {
    return JsonBody.parse(ctx, maxBodyBytes);
  }

  private static void list(Context ctx, List<ObjectNode> items) {
    ObjectNode list = Json.MAPPER.createObjectNode().put("object", "list");
    list.putArray("data").addAll(items);
    Responses.json(ctx, list);
  }
}
