package io.engram.instances;

import io.engram.instances.files.FileStore;
import io.engram.instances.files.JobPlans;
import io.engram.instances.files.JobRunner;
import io.engram.instances.files.StorageJob;
import io.engram.instances.files.StorageJobs;
import io.engram.instances.storage.InstanceViews;
import io.engram.instances.storage.StoragePath;
import io.engram.instances.storage.StoragePermissions;
import io.engram.objectstores.ObjectStoreConnections;
import io.engram.objectstores.ObjectUri;
import io.engram.organizations.InstanceStore;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.HttpServer;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.QueryParams;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.javalin.http.Context;
import java.util.List;
import java.util.Set;

/**
 * {@code POST /v1/nano/{nano_id}/storage/import}, {@code /export} and {@code /copy} start jobs
 * (202 with the job, planned: every file it will carry was checked); {@code GET .../storage/jobs}
 * and {@code .../jobs/{job_id}} follow them, {@code POST .../jobs/{job_id}/cancel} stops one.
 * Import and export are the operator's and admin keys'; a copy is a file operation, so signed-in
 * users may run one within their path permissions.
 */
final class StorageJobRoutes implements RouteModule {
  private static final String JOBS = "/v1/nano/{nano_id}/storage/jobs";
  private static final long MAX_BODY = 16 * 1024;
  private static final int MAX_PAGE = 100;

  private final StorageJobs jobs;
  private final JobRunner runner;
  private final FileStore files;
  private final ObjectStoreConnections stores;
  private final StoragePermissions permissions;
  private final InstanceStore instances;

  StorageJobRoutes(
      StorageJobs jobs,
      JobRunner runner,
      FileStore files,
      ObjectStoreConnections stores,
      StoragePermissions permissions,
      InstanceStore instances) {
    this.jobs = jobs;
    this.runner = runner;
    this.files = files;
    this.stores = stores;
    this.permissions = permissions;
    this.instances = instances;
  }

  @Override
  public void register(Routes routes) {
    routes
        .post(
            "/v1/nano/{nano_id}/storage/import", InstanceAccess.admin(instances), this::importFrom)
        .post("/v1/nano/{nano_id}/storage/export", InstanceAccess.admin(instances), this::exportTo)
        .post("/v1/nano/{nano_id}/storage/copy", InstanceAccess.member(instances), this::copy)
        .get(JOBS, InstanceAccess.member(instances), this::list)
        .get(JOBS + "/{job_id}", InstanceAccess.member(instances), ctx -> {
          InstanceAccess access = access(ctx, true);
          String id = ctx.pathParam("job_id");
          Responses.json(
              ctx,
              jobs.find(access.instanceId(), id)
                  .orElseThrow(
                      () -> ApiException.notFound("job_not_found", "job_id", "No job " + id))
                  .toView());
        })
        .post(JOBS + "/{job_id}/cancel", InstanceAccess.admin(instances), ctx -> {
          InstanceAccess access = access(ctx, false);
          Responses.json(
              ctx, jobs.cancel(access.instanceId(), ctx.pathParam("job_id")).toView());
        });
  }

  private void importFrom(Context ctx) {
    InstanceAccess access = access(ctx, false);
    JsonBody body = body(ctx);
    ObjectUri source = ObjectUri.parse(body.requiredString("source", 1100), "source");
    String destination = body.requiredString("destination", StoragePath.MAX_BYTES);
    List<JobPlans.Planned> items =
        JobPlans.ofImport(stores, access.instanceId(), source, destination);
    long bytes = items.stream().mapToLong(JobPlans.Planned::bytes).sum();
    files.requireRoom(access.organization(), bytes);
    submit(ctx, access, StorageJob.Kind.IMPORT, source.toString(), destination, null, items);
  }

  private void exportTo(Context ctx) {
    InstanceAccess access = access(ctx, false);
    JsonBody body = body(ctx);
    String source = body.requiredString("source", StoragePath.MAX_BYTES);
    ObjectUri destination =
        ObjectUri.parse(body.requiredString("destination", 1100), "destination");
    if (!stores.connected(access.instanceId(), destination)) {
      throw ObjectStoreConnections.notConfigured(destination, "destination");
    }
    List<JobPlans.Planned> items =
        JobPlans.ofExport(files, access.instanceId(), source, destination);
    submit(ctx, access, StorageJob.Kind.EXPORT, source, destination.toString(), null, items);
  }

  private void copy(Context ctx) {
    InstanceAccess access = access(ctx, true);
    JsonBody body = JsonBody.parse(ctx, MAX_BODY);
    body.allowOnly(Set.of("source_path", "destination_nano", "destination_path"));
    String source = body.requiredString("source_path", StoragePath.MAX_BYTES);
    String destinationPath = body.requiredString("destination_path", StoragePath.MAX_BYTES);
    // Another organization's instance does not exist for the caller.
    String destination = instances
        .get(access.orgId(), body.requiredString("destination_nano", 100))
        .id();
    // A signed-in user reads the source and writes the destination, as given.
    permissions.require(access.principal(), access.instanceId(), source, false);
    permissions.require(access.principal(), destination, destinationPath, true);
    List<JobPlans.Planned> items =
        JobPlans.ofCopy(files, access.instanceId(), source, destinationPath);
    files.requireRoom(
        access.organization(), items.stream().mapToLong(JobPlans.Planned::bytes).sum());
    submit(ctx, access, StorageJob.Kind.COPY, source, destinationPath, destination, items);
  }

  private void submit(
      Context ctx,
      InstanceAccess access,
      StorageJob.Kind kind,
      String source,
      String destination,
      String destinationInstance,
      List<JobPlans.Planned> items) {
    StorageJob job = jobs.submit(
        access.organization(),
        access.instanceId(),
        kind,
        source,
        destination,
        destinationInstance,
        items,
        access.principal().credentialId());
    runner.nudge();
    ctx.header("Location", "/v1/nano/" + access.instanceId() + "/storage/jobs/" + job.id());
    ctx.header("X-Request-Id", HttpServer.requestId(ctx));
    Responses.json(ctx, 202, job.toView());
  }

  private void list(Context ctx) {
    InstanceAccess access = access(ctx, true);
    int limit = QueryParams.integer(ctx, "limit", 20, 1, MAX_PAGE);
    List<StorageJob> page = jobs.list(access.instanceId(), ctx.queryParam("before"), limit + 1);
    String next = page.size() > limit ? page.get(limit - 1).id() : null;
    Responses.json(
        ctx,
        InstanceViews.page(page.stream().limit(limit).map(StorageJob::toView).toList(), next));
  }

  private static JsonBody body(Context ctx) {
    JsonBody body = JsonBody.parse(ctx, MAX_BODY);
    body.allowOnly(Set.of("source", "destination"));
    return body;
  }

  private InstanceAccess access(Context ctx, boolean files) {
    return InstanceAccess.of(ctx);
  }
}
