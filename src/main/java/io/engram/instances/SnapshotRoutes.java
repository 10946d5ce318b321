package io.engram.instances;

import io.engram.instances.files.FileStore;
import io.engram.instances.snapshots.Snapshot;
import io.engram.instances.snapshots.Snapshots;
import io.engram.instances.storage.InstanceViews;
import io.engram.instances.storage.StoragePath;
import io.engram.organizations.InstanceStore;
import io.engram.platform.http.HttpServer;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.javalin.http.Context;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * An instance's snapshots: {@code POST /snapshot} takes one (answered once it is complete or
 * failed), {@code GET /snapshots} and {@code /snapshots/{id}} read them, {@code POST /restore}
 * puts one back into a folder or over the live files.
 */
final class SnapshotRoutes implements RouteModule {
  private static final String NANO = "/v1/nano/{nano_id}";

  private final Snapshots snapshots;
  private final InstanceStore instances;
  private final long maxBodyBytes;

  SnapshotRoutes(Snapshots snapshots, InstanceStore instances, long maxBodyBytes) {
    this.snapshots = snapshots;
    this.instances = instances;
    this.maxBodyBytes = maxBodyBytes;
  }

  @Override
  public void register(Routes routes) {
    routes
        .post(NANO + "/snapshot", InstanceAccess.admin(instances), ctx -> {
          InstanceAccess access = access(ctx);
          JsonBody body = JsonBody.parse(ctx, maxBodyBytes);
          body.allowOnly(Set.of("description", "retention_days"));
          String description = body.optionalString("description", 500).orElse(null);
          int days = body.optionalInt("retention_days", 1, Snapshots.MAX_RETENTION_DAYS)
              .orElse(Snapshots.DEFAULT_RETENTION_DAYS);
          Snapshot taken = snapshots.take(
              access.organization(), access.instanceId(), "manual", description, days, null);
          Responses.json(ctx, 201, view(taken));
        })
        .get(NANO + "/snapshots", InstanceAccess.admin(instances), ctx -> {
          InstanceAccess access = access(ctx);
          Responses.json(
              ctx,
              InstanceViews.page(
                  snapshots.list(access.instanceId()).stream()
                      .map(SnapshotRoutes::view)
                      .toList(),
                  null));
        })
        .get(NANO + "/snapshots/{snapshot_id}", InstanceAccess.admin(instances), ctx -> {
          InstanceAccess access = access(ctx);
          Responses.json(
              ctx, view(snapshots.get(access.instanceId(), ctx.pathParam("snapshot_id"))));
        })
        .post(NANO + "/restore", InstanceAccess.admin(instances), ctx -> {
          InstanceAccess access = access(ctx);
          JsonBody body = JsonBody.parse(ctx, maxBodyBytes);
          body.allowOnly(Set.of("snapshot_id", "restore_path"));
          Snapshots.Restored restored = snapshots.restore(
              access.organization(),
              access.instanceId(),
              body.requiredString("snapshot_id", 100),
              body.requiredString("restore_path", StoragePath.MAX_BYTES),
              new FileStore.Actor(access.principal().credentialId(), HttpServer.requestId(ctx)));
          Map<String, Object> view = new LinkedHashMap<>();
          view.put("object", "restore");
          view.put("snapshot_id", restored.snapshotId());
          view.put("restore_path", restored.restorePath());
          view.put("files_written", restored.written());
          view.put("files_removed", restored.removed());
          view.put("safety_snapshot_id", restored.safetySnapshotId());
          view.put("rows_restored", restored.rowsRestored());
          Responses.json(ctx, view);
        });
  }

  static Map<String, Object> view(Snapshot snapshot) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("object", "snapshot");
    view.put("id", snapshot.id());
    view.put("instance_id", snapshot.instanceId());
    view.put("kind", snapshot.kind());
    view.put("description", snapshot.description());
    view.put("status", snapshot.status());
    view.put("created_at", InstanceViews.seconds(snapshot.createdAt()));
    view.put("completed_at", InstanceViews.seconds(snapshot.completedAt()));
    view.put("expires_at", InstanceViews.seconds(snapshot.expiresAt()));
    // As the request gave it (or the default): the days between taking and expiring.
    view.put(
        "retention_days",
        java.time.Duration.between(snapshot.createdAt(), snapshot.expiresAt()).toDays());
    view.put("files", snapshot.files());
    view.put("bytes", snapshot.bytes());
    view.put("manifest_sha256", snapshot.manifestSha256());
    view.put("error", snapshot.error());
    return view;
  }

  private InstanceAccess access(Context ctx) {
    return InstanceAccess.of(ctx);
  }
}
