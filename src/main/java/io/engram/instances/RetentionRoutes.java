package io.engram.instances;

import io.engram.access.ManagedOrganization;
import io.engram.access.Requires;
import io.engram.instances.retention.Retention;
import io.engram.instances.retention.RetentionPolicy;
import io.engram.objectstores.ObjectStoreConnections;
import io.engram.platform.http.HttpServer;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.javalin.http.Context;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * An organization's retention policies: {@code POST /retention} replaces them (all checked
 * first), {@code GET /retention} reads them, {@code POST /retention/run} applies them now, or with
 * {@code dry_run} tells exactly what a run would delete, export and archive. A scheduled job runs
 * them every hour.
 */
final class RetentionRoutes implements RouteModule {
  private static final String RETENTION = "/v1/organizations/{org_id}/retention";

  private final Retention retention;
  private final ObjectStoreConnections stores;
  private final long maxBodyBytes;

  RetentionRoutes(Retention retention, ObjectStoreConnections stores, long maxBodyBytes) {
    this.retention = retention;
    this.stores = stores;
    this.maxBodyBytes = maxBodyBytes;
  }

  @Override
  public void register(Routes routes) {
    routes
        .get(
            RETENTION,
            Requires.organizationAdmin(),
            ctx -> Responses.json(ctx, view(managed(ctx).orgId())))
        .post(RETENTION, Requires.organizationAdmin(), ctx -> {
          ManagedOrganization managed = managed(ctx);
          JsonBody body = JsonBody.parse(ctx, maxBodyBytes);
          body.allowOnly(Set.of("policies"));
          List<RetentionPolicy> policies = RetentionPolicy.parseAll(
              body.get("policies"), uri -> stores.reachable(managed.orgId(), uri));
          retention.set(managed.orgId(), policies, managed.principal().credentialId());
          Responses.json(ctx, view(managed.orgId()));
        })
        .post(RETENTION + "/run", Requires.organizationAdmin(), this::run);
  }

  private void run(Context ctx) {
    ManagedOrganization managed = managed(ctx);
    boolean dryRun = false;
    if (ctx.contentLength() > 0) {
      JsonBody body = JsonBody.parse(ctx, maxBodyBytes);
      body.allowOnly(Set.of("dry_run"));
      dryRun = body.optionalBoolean("dry_run").orElse(false);
    }
    List<Retention.Outcome> outcomes = retention.run(
        managed.organization(),
        dryRun,
        managed.principal().credentialId(),
        HttpServer.requestId(ctx));
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("object", "retention.run");
    view.put("organization_id", managed.orgId());
    view.put("dry_run", dryRun);
    view.put("deleted", lines(outcomes, Retention.Outcome::deleted, o -> o.reason()));
    view.put(
        "exported",
        lines(outcomes, o -> o.deleted() && o.exportedTo() != null, o -> o.exportedTo()));
    view.put(
        "archived",
        lines(outcomes, o -> o.deleted() && o.archivedTo() != null, o -> o.archivedTo()));
    view.put("kept", lines(outcomes, o -> !o.deleted(), o -> o.failure()));
    view.put(
        "bytes",
        outcomes.stream()
            .filter(Retention.Outcome::deleted)
            .mapToLong(Retention.Outcome::bytes)
            .sum());
    Responses.json(ctx, view);
  }

  /**
   * One line per outcome that {@code shown} keeps: the item, and {@code detail}, the reason of a
   * deletion, the destination of a copy or the failure that kept it.
   */
  private static List<Map<String, Object>> lines(
      List<Retention.Outcome> outcomes,
      Predicate<Retention.Outcome> shown,
      Function<Retention.Outcome, String> detail) {
    return outcomes.stream()
        .filter(shown)
        .map(outcome -> {
          Map<String, Object> line = new LinkedHashMap<>();
          line.put("type", outcome.type().wireName());
          line.put("instance_id", outcome.instanceId());
          line.put("item", outcome.item());
          line.put("bytes", outcome.bytes());
          line.put(outcome.deleted() ? "reason" : "failure", detail.apply(outcome));
          return line;
        })
        .toList();
  }

  private Map<String, Object> view(String orgId) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("object", "retention");
    view.put("organization_id", orgId);
    view.put(
        "policies",
        retention.policies(orgId).stream().map(RetentionPolicy::toView).toList());
    view.put(
        "last_run_at", retention.lastRun(orgId).map(at -> at.getEpochSecond()).orElse(null));
    return view;
  }

  private ManagedOrganization managed(Context ctx) {
    return ManagedOrganization.of(ctx);
  }
}
