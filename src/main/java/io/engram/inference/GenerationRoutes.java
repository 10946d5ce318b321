package io.engram.inference;

import io.engram.access.Access;
import io.engram.access.Principal;
import io.engram.access.Requires;
import io.engram.inference.call.CacheMode;
import io.engram.inference.call.ModelCall;
import io.engram.inference.engine.Sampling;
import io.engram.memory.AgentBoundary;
import io.engram.memory.AgentScope;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.HttpServer;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.RouteFamily;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.engram.settings.ConfigField;
import io.javalin.http.Context;
import java.util.Locale;
import java.util.OptionalInt;

/**
 * The generation routes: chat completions (organization and agent boundary) and text completions,
 * answered whole or as a Server-Sent Events stream.
 */
public final class GenerationRoutes implements RouteModule {
  static final String AGENT_CHAT = "/v1/agents/{agentSlug}/chat/completions";
  /** Turns memory off for one request, for clients that cannot add body fields. */
  public static final String MEMORY_HEADER = "X-Engram-Memory";
  /** The ids of the memories put in the prompt, best first, comma-separated. */
  public static final String MEMORY_IDS_HEADER = "X-Engram-Memory-Ids";

  public static final String MEMORY_TOKENS_HEADER = "X-Engram-Memory-Tokens";
  /** The max_tokens asked and what it was lowered to: {@code from=4096; to=1024}. */
  static final String CLAMPED_HEADER = "X-Engram-Max-Tokens-Clamped";
  /**
   * {@code unavailable} when memory was asked for but its index could not be reached: the answer
   * was made without memory (rather than the request refused).
   */
  public static final String MEMORY_STATUS_HEADER = "X-Engram-Memory-Status";

  /** The guardrails that fired on the request: id, phase, action and kinds of each, comma-separated. */
  public static final String GUARDRAILS_HEADER = io.engram.guardrails.Guardrails.HEADER;

  private final Gateway gateway;
  private final long maxBodyBytes;
  private final ChatResponder responder;

  public GenerationRoutes(Gateway gateway, long maxBodyBytes, KeepAlives keepAlives) {
    this.gateway = gateway;
    this.maxBodyBytes = maxBodyBytes;
    this.responder = new ChatResponder(keepAlives);
  }

  @Override
  public void register(Routes routes) {
    routes.exposeHeaders(
        MEMORY_IDS_HEADER,
        MEMORY_TOKENS_HEADER,
        MEMORY_STATUS_HEADER,
        GUARDRAILS_HEADER,
        CacheMode.HEADER,
        CLAMPED_HEADER);
    routes.exposeHeaders(TokenHeaders.NAMES.toArray(String[]::new));
    routes
        .post("/v1/chat/completions", Requires.runsModel(), this::chat)
        .post(AGENT_CHAT, Requires.runsModel(), this::chat)
        .post("/v1/completions", Requires.runsModel(), this::completion);
  }

  private void chat(Context ctx) {
    Principal caller = Access.caller(ctx);
    ChatRequest chat = ChatRequest.parse(JsonBody.parseOpenAi(ctx, maxBodyBytes));
    AgentScope scope = AgentBoundary.of(ctx, caller, "agentSlug", AGENT_CHAT);
    try (ModelCall prepared = prepared(ctx, gateway, caller, scope, chat, null)) {
      responder.respond(
          ctx,
          prepared,
          Replies.Header.create(Replies.Kind.CHAT, prepared.model().card().id()),
          chat.includeUsage(),
          sink -> gateway.generate(prepared, sink));
    }
  }

  private void completion(Context ctx) {
    Principal caller = Access.caller(ctx);
    CompletionRequest parsed = CompletionRequest.parse(JsonBody.parseOpenAi(ctx, maxBodyBytes));
    CompletionRequest completion =
        parsed.withSampling(withinTokensPerRequest(ctx, gateway, caller, parsed.sampling()));
    try (ModelCall prepared = gateway.prepareCompletion(
        caller,
        Access.inferenceSlot(ctx),
        completion,
        CacheMode.of(ctx.header(CacheMode.HEADER)),
        HttpServer.requestId(ctx))) {
      cacheHeader(ctx, prepared);
      guardrailsHeader(ctx, prepared);
      responder.respond(
          ctx,
          prepared,
          Replies.Header.create(Replies.Kind.TEXT, prepared.model().card().id()),
          completion.includeUsage(),
          sink -> gateway.generate(prepared, sink));
    }
  }

  /** X-Engram-Cache: whether the answer comes from the response cache (when it was consulted). */
  private static void cacheHeader(Context ctx, ModelCall prepared) {
    String status = prepared.cache().status();
    if (status != null) {
      ctx.header(CacheMode.HEADER, status);
    }
  }

  /**
   * The chat with its max_tokens lowered to quotas.max_tokens_per_request where it asks more and
   * its organization lowers such requests on this route (quotas.clamp_max_tokens, and
   * quotas.clamp_messages_max_tokens for /v1/messages), said in {@link #CLAMPED_HEADER}; as it
   * came otherwise (admission then refuses what is above the limit).
   */
  private static ChatRequest withinTokensPerRequest(
      Context ctx, Gateway gateway, Principal caller, ChatRequest chat) {
    Sampling sampling = withinTokensPerRequest(ctx, gateway, caller, chat.sampling());
    return sampling == chat.sampling() ? chat : chat.withSampling(sampling);
  }

  private static Sampling withinTokensPerRequest(
      Context ctx, Gateway gateway, Principal caller, Sampling sampling) {
    Integer asked = sampling.maxTokens();
    if (asked == null || caller.organization() == null) {
      return sampling;
    }
    ConfigField clamp = RouteFamily.of(ctx.path()) == RouteFamily.ANTHROPIC
        ? ConfigField.CLAMP_MESSAGES_MAX_TOKENS
        : ConfigField.CLAMP_MAX_TOKENS;
    OptionalInt lowered = gateway.limits().clampedMaxTokens(caller.organization(), asked, clamp);
    if (lowered.isEmpty()) {
      return sampling;
    }
    ctx.header(CLAMPED_HEADER, "from=" + asked + "; to=" + lowered.getAsInt());
    return sampling.clampedTo(lowered.getAsInt());
  }

  /**
   * A chat admitted and put inside the organization's memory for a route that answers it, with
   * the memory's headers ({@link #MEMORY_IDS_HEADER}, {@link #MEMORY_TOKENS_HEADER}) set.
   */
  static ModelCall prepared(
      Context ctx,
      Gateway gateway,
      Principal caller,
      AgentScope scope,
      ChatRequest chat,
      String assistantId) {
    ModelCall prepared = gateway.prepareChat(
        caller,
        Access.inferenceSlot(ctx),
        scope,
        withinTokensPerRequest(ctx, gateway, caller, chat),
        new Gateway.ChatOptions(
            memoryHeader(ctx), CacheMode.of(ctx.header(CacheMode.HEADER)), assistantId, ctx.path()),
        HttpServer.requestId(ctx));
    cacheHeader(ctx, prepared);
    guardrailsHeader(ctx, prepared);
    ctx.header(MEMORY_IDS_HEADER, String.join(",", prepared.memoryIds()));
    ctx.header(MEMORY_TOKENS_HEADER, String.valueOf(prepared.memoryTokens()));
    if (prepared.memoryUnavailable()) {
      ctx.header(MEMORY_STATUS_HEADER, "unavailable");
    }
    return prepared;
  }

  /** Tells the guardrails that fired on the call's input, when some did. */
  static void guardrailsHeader(Context ctx, ModelCall prepared) {
    if (!prepared.guardrails().isEmpty()) {
      ctx.header(GUARDRAILS_HEADER, io.engram.guardrails.Screening.told(prepared.guardrails()));
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
}
