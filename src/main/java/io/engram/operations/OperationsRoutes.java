package io.engram.operations;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.engram.access.Requires;
import io.engram.platform.cluster.Cluster;
import io.engram.platform.cluster.RedisConnection;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.Responses;
import io.engram.platform.http.Routes;
import io.engram.platform.json.Json;
import io.engram.platform.metrics.HttpMetrics;
import io.engram.platform.module.Module;
import io.engram.store.Database;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Liveness, readiness, Prometheus metrics and the OpenAPI document. Liveness and readiness
 * need no credential so load balancers and orchestrators can call them.
 */
public final class OperationsRoutes implements Module {

  private final Database database;
  private final HttpMetrics metrics;
  private final String openApiJson;
  private final Cluster cluster;
  /** The server's modules: each may say it cannot serve yet. */
  private final java.util.function.Supplier<java.util.List<Module>> modules;

  public OperationsRoutes(
      Database database,
      Cluster cluster,
      HttpMetrics metrics,
      java.util.function.Supplier<java.util.List<Module>> modules) {
    this.modules = modules;
    this.database = database;
    this.cluster = cluster;
    this.metrics = metrics;
    this.openApiJson = Json.write(openApiDocument());
  }

  /** The OpenAPI document, written as YAML in the resources and served as JSON. */
  public static JsonNode openApiDocument() {
    try (InputStream in = OperationsRoutes.class.getResourceAsStream("/openapi.yaml")) {
      if (in == null) {
        throw new IllegalStateException("openapi.yaml is missing from the classpath");
      }
      return new ObjectMapper(new YAMLFactory()).readTree(in);
    } catch (IOException e) {
      throw new UncheckedIOException("openapi.yaml is not valid YAML", e);
    }
  }

  @Override
  public String name() {
    return "operations";
  }

  @Override
  public void register(Routes routes) {
    routes
        .get("/v1/health", Requires.anyone(), ctx -> Responses.json(ctx, Map.of("status", "ok")))
        .get("/health", Requires.anyone(), ctx -> Responses.json(ctx, Map.of("status", "ok")))
        .get("/v1/health/ready", Requires.anyone(), ctx -> {
          if (!database.isReachable()) {
            throw ApiException.unavailable("not_ready", "The database is not reachable");
          }
          Map<String, Object> checks = new LinkedHashMap<>();
          checks.put(
              "database",
              Map.of("status", "ok", "kind", database.kind().name().toLowerCase(Locale.ROOT)));
          for (Module module : modules.get()) {
            String why = module.notReadyBecause();
            if (why != null) {
              throw ApiException.unavailable("not_ready", why);
            }
            checks.putAll(module.readinessNotes());
          }
          cluster.redis().ifPresent(redis -> checks.put("redis", redisCheck(redis)));
          Responses.json(ctx, Map.of("status", "ready", "checks", checks));
        })
        .get("/metrics", Requires.operatorOrOpen(), ctx -> {
          ctx.contentType("text/plain; version=0.0.4; charset=utf-8").result(metrics.scrape());
        })
        .get(
            "/openapi.json",
            Requires.anyone(),
            ctx -> ctx.contentType("application/json").result(openApiJson));
  }

  /**
   * Redis away does not make the node unready: it serves on, each limit counted on this node
   * (docs/scaling.md), so a balancer must not take every node out at once when Redis goes.
   */
  private static Map<String, Object> redisCheck(RedisConnection redis) {
    if (redis.available()) {
      return Map.of("status", "ok");
    }
    return Map.of("status", "unavailable", "unavailable_seconds", redis.unavailableSeconds());
  }
}
