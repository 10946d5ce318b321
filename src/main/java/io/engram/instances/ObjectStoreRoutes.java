package io.engram.instances;

import io.engram.instances.storage.InstanceViews;
import io.engram.instances.storage.StorageLog;
import io.engram.objectstores.ObjectStoreConnections;
import io.engram.objectstores.ObjectStoreProvider;
import io.engram.organizations.InstanceStore;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.HttpServer;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.javalin.http.Context;
import java.util.Map;

/**
 * {@code POST /v1/nano/{nano_id}/storage/s3}, {@code /gcs} and {@code /azure} connect a bucket
 * or container (checked by a real call first; the secret is sealed and never shown again);
 * {@code GET .../storage/stores} lists the connections, {@code DELETE .../stores/{store_id}}
 * forgets one. The operator's and admin keys' only, and logged in the storage log.
 */
final class ObjectStoreRoutes implements RouteModule {
  private static final String STORES = "/v1/nano/{nano_id}/storage/stores";
  private static final long MAX_BODY = 64 * 1024;

  private final ObjectStoreConnections stores;
  private final StorageLog log;
  private final InstanceStore instances;

  ObjectStoreRoutes(ObjectStoreConnections stores, StorageLog log, InstanceStore instances) {
    this.stores = stores;
    this.log = log;
    this.instances = instances;
  }

  @Override
  public void register(Routes routes) {
    for (ObjectStoreProvider provider : ObjectStoreProvider.values()) {
      routes.post(
          "/v1/nano/{nano_id}/storage/" + provider.wireName(),
          InstanceAccess.admin(instances),
          ctx -> connect(ctx, provider));
    }
    routes
        .get(STORES, InstanceAccess.admin(instances), ctx -> {
          InstanceAccess access = access(ctx);
          Responses.json(
              ctx,
              InstanceViews.page(
                  stores.list(access.instanceId()).stream()
                      .map(ObjectStoreConnections.Connection::toView)
                      .toList(),
                  null));
        })
        .delete(STORES + "/{store_id}", InstanceAccess.admin(instances), ctx -> {
          InstanceAccess access = access(ctx);
          String id = ctx.pathParam("store_id");
          if (!stores.disconnect(access.instanceId(), id)) {
            throw ApiException.notFound("object_store_not_found", "store_id", "No store " + id);
          }
          record(ctx, access, "disconnect", id);
          ctx.status(204);
        });
  }

  private void connect(Context ctx, ObjectStoreProvider provider) {
    InstanceAccess access = access(ctx);
    JsonBody body = JsonBody.parse(ctx, MAX_BODY);
    ObjectStoreConnections.Connected connected = stores.connect(
        access.orgId(), access.instanceId(), provider, body, access.principal().credentialId());
    ObjectStoreConnections.Connection connection = connected.connection();
    boolean created = connected.created();
    record(ctx, access, created ? "connect" : "reconnect", connection.toView().get("uri"));
    Map<String, Object> view = connection.toView();
    Responses.json(ctx, created ? 201 : 200, view);
  }

  private void record(Context ctx, InstanceAccess access, String action, Object what) {
    log.record(
        access.orgId(),
        access.instanceId(),
        access.principal().credentialId(),
        action,
        String.valueOf(what),
        null,
        "ok",
        HttpServer.requestId(ctx));
  }

  private InstanceAccess access(Context ctx) {
    return InstanceAccess.of(ctx);
  }
}
