package io.engram.memory.transfer;

import io.engram.access.Access;
import io.engram.access.Principal;
import io.engram.access.Requires;
import io.engram.access.Scope;
import io.engram.memory.AgentScope;
import io.engram.memory.MemoryRoutes;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.HttpServer;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.QueryParams;
import io.engram.platform.http.Responses;
import io.engram.platform.http.Routes;
import io.javalin.http.Context;
import java.io.IOException;
import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Taking a boundary's memories out and putting them in: {@code GET .../export} streams them as
 * JSON Lines ({@link MemoryExport}), {@code POST .../import} writes such a file ({@link
 * MemoryImport}), at the organization level and inside an agent, for one end user or all.
 */
final class MemoryTransferRoutes {
  private static final Logger LOG = LoggerFactory.getLogger(MemoryTransferRoutes.class);
  static final String JSON_LINES = "application/x-ndjson";

  private final MemoryExport exporter;
  private final MemoryImport importer;

  MemoryTransferRoutes(MemoryExport exporter, MemoryImport importer) {
    this.exporter = exporter;
    this.importer = importer;
  }

  void register(Routes routes, String base) {
    routes
        .get(base + "/export", Requires.scope(Scope.MEMORY_READ), this::export)
        // Lines carry states and uses (reinforcements): what memory:control changes, too.
        .post(
            base + "/import",
            Requires.allScopes(Scope.MEMORY_WRITE, Scope.MEMORY_CONTROL),
            this::importLines);
  }

  /**
   * The boundary's memories and everything beneath it (every agent's at the organization level,
   * every end user's unless one is named), in {@code state} (default: all but tombstoned), after
   * the {@code after} id, at most {@code limit}, with vectors unless {@code embeddings=false}.
   */
  private void export(Context ctx) {
    Principal caller = Access.caller(ctx);
    AgentScope scope = MemoryRoutes.scope(ctx, caller);
    String after = ctx.queryParam("after");
    if (after != null && (after.isEmpty() || after.length() > 64)) {
      throw ApiException.badRequest("after", "'after' must be a memory id (the last one read)");
    }
    Long limit = QueryParams.longValue(ctx, "limit", 1, Long.MAX_VALUE);
    MemoryExport.Request request = new MemoryExport.Request(
        MemoryRoutes.filter(ctx, MemoryRoutes.states(ctx, "candidate,durable,suppressed")),
        after,
        limit == null ? Long.MAX_VALUE : limit,
        QueryParams.bool(ctx, "embeddings", true));
    ctx.status(200).contentType(JSON_LINES + "; charset=utf-8");
    ctx.header(
        "Content-Disposition",
        "attachment; filename=\"memories-" + caller.orgId()
            + (scope.agent() == null ? "" : "-" + scope.agent()) + ".jsonl\"");
    try {
      exporter.write(caller.orgId(), scope, request, ctx.res().getOutputStream());
    } catch (IOException e) {
      LOG.debug("an export's client went away: {}", e.toString());
    } catch (RuntimeException e) {
      if (!ctx.res().isCommitted()) {
        throw e; // nothing sent yet: answered as any failure is
      }
      // Part of it was sent: it ends without its last line, which tells the client it is not whole.
      LOG.warn("an export of {} stopped part way: {}", caller.orgId(), e.toString());
    }
  }

  private void importLines(Context ctx) {
    Principal caller = Access.caller(ctx);
    AgentScope scope = MemoryRoutes.scope(ctx, caller);
    String type = ctx.contentType() == null ? "" : ctx.contentType().toLowerCase(Locale.ROOT);
    if (!(type.startsWith(JSON_LINES)
        || type.startsWith("application/jsonl")
        || type.startsWith("application/json")
        || type.startsWith("text/plain"))) {
      throw ApiException.unsupportedMediaType(
          JSON_LINES + " (JSON Lines, one memory per line)", ctx.contentType());
    }
    JsonBody.refuseEncodedBody(ctx.header("Content-Encoding"));
    boolean skipMistakes = switch (Objects.requireNonNullElse(ctx.queryParam("onError"), "stop")) {
      case "stop" -> false;
      case "skip" -> true;
      default ->
        throw ApiException.badRequest(
            "onError",
            "'onError' is stop (a line with a mistake refuses the whole import: the default) or"
                + " skip (such lines are left out and reported)");
    };
    MemoryImport.Summary summary;
    try (InputStream body = ctx.bodyInputStream()) {
      summary = importer.run(caller, scope, body, HttpServer.requestId(ctx), skipMistakes);
    } catch (IOException e) {
      throw JsonBody.unreadable(ctx, e);
    }
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("object", "memory.import");
    view.put("agent", scope.agent());
    view.put("userId", scope.user());
    view.put("lines", summary.lines());
    view.put("rejected", summary.rejected());
    view.put(
        "errors",
        summary.errors().stream()
            .map(e -> Map.of("param", e.field(), "message", e.error()))
            .toList());
    view.put("imported", summary.imported());
    view.put("alreadyPresent", summary.alreadyPresent());
    view.put("duplicates", summary.duplicates());
    view.put("vectorsKept", summary.vectorsKept());
    view.put("vectorsComputed", summary.vectorsComputed());
    view.put("renamedCount", summary.renamedCount());
    view.put("renamed", summary.renamed());
    view.put("tookMs", summary.millis());
    Responses.json(ctx, view);
  }
}
