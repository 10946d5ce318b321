package io.engram.capabilities;

import io.engram.access.Access;
import io.engram.access.Principal;
import io.engram.access.Requires;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.EntityTags;
import io.engram.platform.http.HttpServer;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.QueryParams;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.javalin.http.Context;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** /api/assistants: create, list, read and delete assistants (signed-in sessions and API keys). */
public final class AssistantRoutes implements RouteModule {
  static final String ASSISTANT = "/api/assistants/{assistantId}";
  private static final int MAX_NAME_LENGTH = 200;

  private final AssistantService assistants;
  private final long maxBodyBytes;

  public AssistantRoutes(AssistantService assistants, long maxBodyBytes) {
    this.assistants = assistants;
    this.maxBodyBytes = maxBodyBytes;
  }

  @Override
  public void register(Routes routes) {
    routes.exposeHeaders("ETag");
    routes
        .post("/api/assistants", Requires.signedIn(), this::create)
        .get("/api/assistants", Requires.signedIn(), this::list)
        .get(ASSISTANT, Requires.signedIn(), ctx -> {
          Assistant assistant = assistants.get(Access.caller(ctx), ctx.pathParam("assistantId"));
          respond(ctx, 200, assistant, Map.of());
        })
        .patch(ASSISTANT, Requires.signedIn(), ctx -> {
          Principal caller = Access.caller(ctx);
          JsonBody body = JsonBody.parse(ctx, maxBodyBytes).allowOnly(Set.of("name"));
          String name = body.requiredString("name", MAX_NAME_LENGTH);
          if (name.isBlank()) {
            throw ApiException.badRequest("name", "'name' must not be blank");
          }
          Assistant renamed = assistants.rename(caller, ctx.pathParam("assistantId"), name.strip());
          respond(ctx, 200, renamed, Map.of("message", "Assistant renamed to " + renamed.name()));
        })
        .delete(ASSISTANT, Requires.signedIn(), ctx -> {
          String id = ctx.pathParam("assistantId");
          assistants.delete(Access.caller(ctx), id);
          Responses.json(ctx, Map.of("success", true, "message", "Assistant " + id + " deleted"));
        });
  }

  private void create(Context ctx) {
    Principal caller = Access.caller(ctx);
    JsonBody body = JsonBody.parse(ctx, maxBodyBytes).allowOnly(Set.of("name", "type", "ownerId"));
    String name = body.requiredString("name", MAX_NAME_LENGTH);
    String typeId = body.requiredString("type", 64);
    AssistantType type = AssistantType.fromId(typeId)
        .orElseThrow(() -> ApiException.badRequest(
            "type", "'type' must be org_shared or employee_personal, got '" + typeId + "'"));
    Assistant assistant = assistants.create(
        caller,
        name,
        type,
        body.optionalString("ownerId", 64).orElse(null),
        HttpServer.requestId(ctx));
    respond(ctx, 201, assistant, Map.of("message", "Assistant " + name + " created"));
  }

  private void list(Context ctx) {
    Principal caller = Access.caller(ctx);
    String typeFilter = ctx.queryParam("type");
    AssistantType type = typeFilter == null
        ? null
        : AssistantType.fromFilter(typeFilter)
            .orElseThrow(() ->
                ApiException.badRequest("type", "'type' must be org_shared or employee_personal"));
    int limit = QueryParams.integer(ctx, "limit", 50, 1, 200);
    List<Assistant> page = assistants.list(caller, type, ctx.queryParam("after"), limit);
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("success", true);
    body.put("assistants", page.stream().map(AssistantViews::assistant).toList());
    body.put("nextAfter", page.size() == limit ? page.getLast().id() : null);
    Responses.json(ctx, body);
  }

  /** {@code {success, assistant, ...extra}} with the assistant's version as the ETag. */
  static void respond(Context ctx, int status, Assistant assistant, Map<String, Object> extra) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("success", true);
    body.put("assistant", AssistantViews.assistant(assistant));
    body.putAll(extra);
    ctx.header("ETag", EntityTags.of(assistant.version()));
    Responses.json(ctx, status, body);
  }
}
