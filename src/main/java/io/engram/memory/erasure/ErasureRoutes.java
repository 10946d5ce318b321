package io.engram.memory.erasure;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.access.Access;
import io.engram.access.Principal;
import io.engram.access.Requires;
import io.engram.access.Scope;
import io.engram.memory.AgentScope;
import io.engram.memory.EndUsers;
import io.engram.memory.MemoryRoutes;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.Responses;
import io.engram.platform.http.Routes;
import io.engram.platform.json.Json;
import io.javalin.http.Context;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code POST .../erase} starts an erasure (202, the job), {@code GET .../erasures/{erasure_id}}
 * shows it and, once done, its receipt, {@code POST .../erasures/{erasure_id}/verify} checks the
 * receipt again. Erasing is {@code memory:delete}; an erasure is seen from the boundary it ran in
 * or above it (an end user's from that user, the organization's level, its agent).
 */
final class ErasureRoutes {
  private final Erasures erasures;
  private final long maxBodyBytes;

  ErasureRoutes(Erasures erasures, long maxBodyBytes) {
    this.erasures = erasures;
    this.maxBodyBytes = maxBodyBytes;
  }

  void register(Routes routes, String base) {
    routes
        .post(base + "/erase", Requires.scope(Scope.MEMORY_DELETE), this::erase)
        .get(base + "/erasures/{erasure_id}", Requires.scope(Scope.MEMORY_DELETE), ctx -> {
          Principal caller = Access.caller(ctx);
          Responses.json(
              ctx,
              view(erasures.get(
                  caller.orgId(), MemoryRoutes.scope(ctx, caller), ctx.pathParam("erasure_id"))));
        })
        .post(
            base + "/erasures/{erasure_id}/verify",
            Requires.scope(Scope.MEMORY_DELETE),
            this::verify);
  }

  private void erase(Context ctx) {
    Principal caller = Access.caller(ctx);
    JsonBody body = JsonBody.parse(ctx, maxBodyBytes);
    AgentScope scope = EndUsers.withBody(MemoryRoutes.scope(ctx, caller), caller, body);
    ErasureRequest request = ErasureRequest.parse(body, scope);
    ErasureStore.Row row = erasures.start(caller, scope, request);
    ctx.header("Location", ctx.path().replaceFirst("/erase$", "/erasures/" + row.id()));
    Responses.json(ctx, 202, view(row));
  }

  private void verify(Context ctx) {
    Principal caller = Access.caller(ctx);
    ErasureStore.Row row =
        erasures.get(caller.orgId(), MemoryRoutes.scope(ctx, caller), ctx.pathParam("erasure_id"));
    Erasures.Verification check = erasures.verify(row);
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("object", "memory.erasure.verification");
    view.put("erasure", row.id());
    view.put("verified", check.verified());
    view.put("digestMatches", check.digestMatches());
    view.put("memoriesChecked", check.memoriesChecked());
    view.put("holdingContent", check.holdingContent());
    view.put("leftBehind", check.leftBehind());
    view.put("stillIndexed", check.stillIndexed());
    Responses.json(ctx, view);
  }

  static Map<String, Object> view(ErasureStore.Row row) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("id", row.id());
    view.put("object", "memory.erasure");
    view.put("status", row.status());
    view.put("agent", row.agent());
    view.put("userId", row.endUser());
    view.put("selector", Json.read(row.selectorJson(), JsonNode.class));
    view.put("reason", row.reason());
    view.put("requestedAt", row.requestedAt().toString());
    view.put("completedAt", row.completedAt() == null ? null : row.completedAt().toString());
    boolean done = ErasureStore.COMPLETED.equals(row.status());
    view.put(
        "receipt",
        done && row.receiptJson() != null ? Json.read(row.receiptJson(), JsonNode.class) : null);
    view.put(
        "progress",
        !done && row.receiptJson() != null ? Json.read(row.receiptJson(), JsonNode.class) : null);
    view.put("lastError", row.error());
    return view;
  }
}
