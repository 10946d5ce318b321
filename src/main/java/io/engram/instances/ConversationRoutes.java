package io.engram.instances;

import io.engram.organizations.InstanceStore;
import io.engram.platform.http.QueryParams;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.engram.platform.json.Json;
import io.javalin.http.Context;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An instance's conversation history: {@code GET /v1/nano/{nano_id}/conversations} (newest first,
 * a page at a time), one exchange whole, and its deletion.
 */
final class ConversationRoutes implements RouteModule {
  private static final String CONVERSATIONS = "/v1/nano/{nano_id}/conversations";
  private static final int MAX_PAGE = 100;

  private final ConversationHistory history;
  private final InstanceStore instances;

  ConversationRoutes(ConversationHistory history, InstanceStore instances) {
    this.history = history;
    this.instances = instances;
  }

  @Override
  public void register(Routes routes) {
    routes
        .get(CONVERSATIONS, InstanceAccess.admin(instances), ctx -> {
          InstanceAccess access = access(ctx);
          int limit = QueryParams.integer(ctx, "limit", 20, 1, MAX_PAGE);
          List<ConversationHistory.Stored> page =
              history.page(access.instanceId(), ctx.queryParam("before"), limit + 1);
          String next = page.size() > limit ? page.get(limit - 1).id() : null;
          Responses.json(
              ctx,
              InstanceViews.page(
                  page.stream().limit(limit).map(e -> view(e, false)).toList(), next));
        })
        .get(CONVERSATIONS + "/{conversation_id}", InstanceAccess.admin(instances), ctx -> {
          InstanceAccess access = access(ctx);
          Responses.json(
              ctx, view(history.get(access.instanceId(), ctx.pathParam("conversation_id")), true));
        })
        .delete(CONVERSATIONS + "/{conversation_id}", InstanceAccess.admin(instances), ctx -> {
          InstanceAccess access = access(ctx);
          history.delete(access.instanceId(), ctx.pathParam("conversation_id"));
          ctx.status(204);
        });
  }

  static Map<String, Object> view(ConversationHistory.Stored exchange, boolean whole) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("object", "conversation.exchange");
    view.put("id", exchange.id());
    view.put("instance_id", exchange.instanceId());
    view.put("created_at", InstanceViews.seconds(exchange.createdAt()));
    ConversationHistory.Answered answered = exchange.answered();
    view.put("model", answered.model());
    view.put("credential_id", answered.credentialId());
    view.put("request_id", answered.requestId());
    Map<String, Object> usage = new LinkedHashMap<>();
    usage.put("prompt_tokens", answered.promptTokens());
    usage.put("completion_tokens", answered.completionTokens());
    usage.put("memory_tokens", answered.memoryTokens());
    view.put("usage", usage);
    view.put("bytes", exchange.bytes());
    if (whole) {
      view.put("messages", Json.read(answered.messages(), Object.class));
      view.put("answer", answered.answer());
    }
    return view;
  }

  private InstanceAccess access(Context ctx) {
    return InstanceAccess.of(ctx);
  }
}
