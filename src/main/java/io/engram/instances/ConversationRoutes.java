package io.engram.instances;

import io.engram.instances.storage.ConversationHistory;
import io.engram.instances.storage.InstanceViews;
import io.engram.organizations.InstanceStore;
import io.engram.platform.http.QueryParams;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.javalin.http.Context;
import java.util.List;

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
                  page.stream()
                      .limit(limit)
                      .map(e -> InstanceViews.exchange(e, false))
                      .toList(),
                  next));
        })
        .get(CONVERSATIONS + "/{conversation_id}", InstanceAccess.admin(instances), ctx -> {
          InstanceAccess access = access(ctx);
          Responses.json(
              ctx,
              InstanceViews.exchange(
                  history.get(access.instanceId(), ctx.pathParam("conversation_id")), true));
        })
        .delete(CONVERSATIONS + "/{conversation_id}", InstanceAccess.admin(instances), ctx -> {
          InstanceAccess access = access(ctx);
          history.delete(access.instanceId(), ctx.pathParam("conversation_id"));
          ctx.status(204);
        });
  }

  private InstanceAccess access(Context ctx) {
    return InstanceAccess.of(ctx);
  }
}
