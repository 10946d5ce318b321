package io.engram.inference;

import io.engram.access.Guard;
import io.engram.access.Permission;
import io.engram.access.Principal;
import io.engram.inference.engine.ClientGoneException;
import io.engram.inference.engine.EngineException;
import io.engram.inference.engine.TokenSink;
import io.engram.memory.AgentBoundary;
import io.engram.memory.AgentScope;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.HttpServer;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.javalin.http.Context;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The generation routes: chat completions (organization and agent boundary) and text completions,
 * answered whole or as a Server-Sent Events stream.
 */
public final class GenerationRoutes implements RouteModule {
  private static final Logger LOG = LoggerFactory.getLogger(GenerationRoutes.class);
  static final String AGENT_CHAT = "/v1/agents/{agentSlug}/chat/completions";
  /** Turns memory off for one request, for clients that cannot add body fields. */
  public static final String MEMORY_HEADER = "X-Engram-Memory";
  /** The ids of the memories put in the prompt, best first, comma-separated. */
  public static final String MEMORY_IDS_HEADER = "X-Engram-Memory-Ids";

  public static final String MEMORY_TOKENS_HEADER = "X-Engram-Memory-Tokens";

  private final Gateway gateway;
  private final Guard guard;
  private final long maxBodyBytes;
  private final ScheduledExecutorService keepAlives;
  private final Duration keepAlive;

  public GenerationRoutes(
      Gateway gateway,
      Guard guard,
      long maxBodyBytes,
      ScheduledExecutorService keepAlives,
      Duration keepAlive) {
    this.gateway = gateway;
    this.guard = guard;
    this.maxBodyBytes = maxBodyBytes;
    this.keepAlives = keepAlives;
    this.keepAlive = keepAlive;
  }

  @Override
  public void register(Routes routes) {
    routes.exposeHeaders(MEMORY_IDS_HEADER, MEMORY_TOKENS_HEADER);
    routes.exposeHeaders(TokenHeaders.NAMES.toArray(String[]::new));
    routes
        .post("/v1/chat/completions", this::chat)
        .post(AGENT_CHAT, this::chat)
        .post("/v1/completions", this::completion);
  }

  private void chat(Context ctx) {
    Principal caller = guard.inference(ctx);
    ChatRequest chat = ChatRequest.parse(JsonBody.parseOpenAi(ctx, maxBodyBytes));
    AgentScope scope = AgentBoundary.of(ctx, caller, "agentSlug", AGENT_CHAT);
    try (Gateway.Prepared prepared =
        gateway.prepareChat(caller, scope, chat, memoryHeader(ctx), HttpServer.requestId(ctx))) {
      ctx.header(MEMORY_IDS_HEADER, String.join(",", prepared.memoryIds()));
      ctx.header(MEMORY_TOKENS_HEADER, String.valueOf(prepared.memoryTokens()));
      respond(
          ctx,
          caller,
          prepared,
          Replies.Header.create(Replies.Kind.CHAT, prepared.model().card().id()),
          chat.includeUsage());
    }
  }

  private void completion(Context ctx) {
    Principal caller = guard.permission(ctx, Permission.INFERENCE);
    CompletionRequest completion = CompletionRequest.parse(JsonBody.parseOpenAi(ctx, maxBodyBytes));
    try (Gateway.Prepared prepared = gateway.prepareCompletion(caller, completion)) {
      respond(
          ctx,
          caller,
          prepared,
          Replies.Header.create(Replies.Kind.TEXT, prepared.model().card().id()),
          completion.includeUsage());
    }
  }

  /** {@code X-Engram-Memory: off} turns memory off; {@code on} (the default) leaves it to the body. */
  static boolean memoryHeader(Context ctx) {
    String value = ctx.header(MEMORY_HEADER);
    if (value == null) {
      return true;
    }
    return switch (value.strip().toLowerCase(Locale.ROOT)) {
      case "on" -> true;
      case "off" -> false;
      default ->
        throw ApiException.badRequest(MEMORY_HEADER, MEMORY_HEADER + " must be 'on' or 'off'");
    };
  }

  private void respond(
      Context ctx,
      Principal caller,
      Gateway.Prepared prepared,
      Replies.Header header,
      boolean includeUsage) {
    TokenHeaders.write(ctx, prepared.budget());
    if (!prepared.request().stream()) {
      Gateway.Outcome outcome;
      try {
        outcome = gateway.generate(caller, prepared, Discard.INSTANCE);
      } catch (EngineException e) {
        LOG.warn("generation failed: {}", e.getMessage());
        throw e.toApiException();
      }
      Responses.json(
          ctx,
          Replies.whole(header, outcome.generation(), outcome.usage(), prepared.memoryTokens()));
      return;
    }
    try (EventStream events = new EventStream(ctx, keepAlives, keepAlive)) {
      StreamingReply reply = new StreamingReply(events, header, includeUsage);
      try {
        Gateway.Outcome outcome = gateway.generate(caller, prepared, reply);
        reply.complete(
            outcome.generation().finishReason(), outcome.usage(), prepared.memoryTokens());
      } catch (ClientGoneException e) {
        LOG.debug("client left during a stream; generation stopped");
      } catch (EngineException e) {
        LOG.warn(
            "generation failed{}: {}", events.isOpen() ? " during the stream" : "", e.getMessage());
        if (!events.isOpen()) {
          throw e.toApiException();
        }
        reply.failQuietly(e.toApiException());
      } catch (RuntimeException e) {
        if (!events.isOpen()) {
          throw e;
        }
        LOG.error("unexpected failure during a stream", e);
        reply.failQuietly(ApiException.internal());
      }
    }
  }

  /** A sink for whole (non-streamed) replies: the generation's text is taken from its result. */
  private enum Discard implements TokenSink {
    INSTANCE;

    @Override
    public void begin() {}

    @Override
    public void text(String piece) {}
  }
}
