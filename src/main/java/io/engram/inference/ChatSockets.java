package io.engram.inference;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.access.Principal;
import io.engram.access.SocketAccess;
import io.engram.inference.call.CacheMode;
import io.engram.inference.call.ModelCall;
import io.engram.inference.call.Outcome;
import io.engram.inference.engine.ClientGoneException;
import io.engram.inference.engine.EngineException;
import io.engram.inference.engine.TokenSink;
import io.engram.memory.AgentBoundary;
import io.engram.memory.AgentScope;
import io.engram.platform.Ids;
import io.engram.platform.config.EngramConfig;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.ErrorResponses;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.engram.platform.json.Json;
import io.engram.platform.module.Job;
import io.engram.platform.ratelimit.ConcurrencySlots;
import io.engram.platform.tracing.Traces;
import io.engram.platform.tracing.TracingFilter;
import io.engram.settings.ConfigField;
import io.engram.settings.EffectiveConfig;
import io.engram.settings.OrganizationConfigs;
import io.javalin.websocket.WsConfig;
import io.javalin.websocket.WsContext;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Chat over WebSocket, in the spec's two protocols.
 *
 * <ul>
 *   <li>{@code /ws}: the first message is {@code {type: auth, api_key}}; then
 *       {@code {type: inference, model, messages, stream, ...}} is answered by {@code {type: token,
 *       content}} frames and one {@code {type: done, finish_reason, usage, memory_ids}}.</li>
 *   <li>{@code /v1/chat/stream}: authenticated by the upgrade request's {@code Authorization}
 *       header (or an auth message as on /ws); then {@code {model, messages, stream, ...}} with no
 *       type, answered by the same frames an SSE stream carries: chunk objects, then {@code [DONE]}.</li>
 * </ul>
 *
 * Errors are {@code {type: error, error: {...}}} on /ws and {@code {error: {...}}} on
 * /v1/chat/stream; a request error leaves the connection open, an authentication error closes it.
 * The two protocols differ only in their frames ({@link TypedFraming}, {@link ChunkFraming}).
 * One inference runs at a time per connection, on its own virtual thread, with each frame's
 * send awaited so a slow reader slows the generation instead of filling memory.
 */
public final class ChatSockets implements RouteModule {
  private static final Logger LOG = LoggerFactory.getLogger(ChatSockets.class);
  static final int POLICY_VIOLATION = 1008;
  static final int TRY_AGAIN_LATER = 1013;

  private final Gateway gateway;
  private final SocketAccess access;
  private final EngramConfig.WebSocketSettings settings;
  private final OrganizationConfigs configs;
  private final Tracer tracer;
  private final Map<String, SocketSession> sessions = new ConcurrentHashMap<>();
  private final AtomicInteger open = new AtomicInteger();
  /** The organizations' open connections: counted here, or in Redis across every node. */
  private final ConcurrencySlots connectionsPerOrganization;

  public ChatSockets(
      Gateway gateway,
      SocketAccess access,
      EngramConfig.WebSocketSettings settings,
      OrganizationConfigs configs,
      ConcurrencySlots connectionsPerOrganization,
      Tracer tracer) {
    this.tracer = tracer;
    this.connectionsPerOrganization = connectionsPerOrganization;
    this.gateway = gateway;
    this.access = access;
    this.settings = settings;
    this.configs = configs;
  }

  /**
   * Closes the connections that did not authenticate in time, looking four times a timeout (at
   * most every 100 ms, at least every second).
   */
  Job authDeadlines() {
    long quarter = settings.authTimeout().toMillis() / 4;
    return Job.every(
        Duration.ofMillis(Math.clamp(quarter, 100, 1000)),
        "close WebSockets that did not authenticate in time",
        () -> {
          long now = System.nanoTime();
          sessions.values().forEach(session -> session.closeIfUnauthenticated(now));
        });
  }

  @Override
  public void register(Routes routes) {
    if (!settings.enabled()) {
      return;
    }
    routes
        .ws("/ws", ws -> configure(ws, new TypedFraming()))
        // The same protocol under /v1, where every other gateway route is.
        .ws("/v1/ws", ws -> configure(ws, new TypedFraming()))
        .ws("/v1/chat/stream", ws -> configure(ws, new ChunkFraming()));
  }

  /** Open connections on this node (tests and metrics). */
  public int openConnections() {
    return open.get();
  }

  /** Open, authenticated connections of one organization on this node. */
  public int openConnections(String orgId) {
    return connectionsPerOrganization.heldHere(connectionKey(orgId));
  }

  /** The organization's WebSocket connections, apart from its inference requests' slots. */
  private static String connectionKey(String orgId) {
    return "ws:" + orgId;
  }

  private void configure(WsConfig ws, SocketFraming framing) {
    ws.onConnect(ctx -> connect(ctx, framing));
    ws.onMessage(ctx -> {
      SocketSession session = sessions.get(ctx.sessionId());
      if (session != null) {
        session.receive(ctx.message());
      }
    });
    ws.onClose(ctx -> closed(ctx.sessionId()));
    ws.onError(ctx -> closed(ctx.sessionId()));
  }

  private void connect(WsContext ctx, SocketFraming framing) {
    if (open.incrementAndGet() > settings.maxConnections()) {
      open.decrementAndGet();
      SocketSession refused = new SocketSession(ctx, framing);
      refused.sendError(ApiException.rateLimited(
          "too_many_connections",
          "This server already has " + settings.maxConnections()
              + " WebSocket connections open, the most it allows; retry later",
          1));
      ctx.closeSession(TRY_AGAIN_LATER, "too many connections");
      return;
    }
    ctx.session.setIdleTimeout(settings.idleTimeout());
    SocketSession session = new SocketSession(ctx, framing);
    sessions.put(ctx.sessionId(), session);
    String authorization = ctx.header("Authorization");
    if (framing.acceptsHeaderAuth() && authorization != null) {
      session.authenticate(bearer(authorization), false);
    }
  }

  private void closed(String sessionId) {
    SocketSession session = sessions.remove(sessionId);
    if (session != null) {
      open.decrementAndGet();
      ConcurrencySlots.Slot counted = session.counted;
      if (counted != null) {
        counted.close();
      }
      session.gone();
    }
  }

  private static String bearer(String authorization) {
    String[] parts = authorization.strip().split("\\s+", 2);
    return parts.length == 2 && parts[0].equalsIgnoreCase("Bearer") ? parts[1] : "";
  }

  /** The upgrade request's headers, for its W3C trace context. */
  private static final TextMapGetter<WsContext> UPGRADE_HEADERS = new TextMapGetter<>() {
    @Override
    public Iterable<String> keys(WsContext ctx) {
      return ctx.headerMap().keySet();
    }

    @Override
    public String get(WsContext ctx, String name) {
      return ctx == null ? null : ctx.header(name);
    }
  };

  /** A connection refused and closed with its own code and message. */
  private static final class ClosedAlready extends RuntimeException {
    ClosedAlready() {
      super(null, null, false, false);
    }
  }

  /** One connection: its caller once authenticated, and the inference it is running. */
  private final class SocketSession {
    private final WsContext ctx;
    /** When a connection that has not authenticated is closed (monotonic: elapsed, not dated). */
    private final long authDeadlineNanos;

    private final SocketFraming framing;
    private final FrameSender frames;
    /** The upgrade request's trace context: each chat's span is its child. */
    private final Context traceParent;

    private volatile Principal caller;
    private volatile boolean busy;
    /** The organization's connection slot this one holds, once authenticated. */
    private volatile ConcurrencySlots.Slot counted;

    SocketSession(WsContext ctx, SocketFraming framing) {
      this.authDeadlineNanos = System.nanoTime() + settings.authTimeout().toNanos();
      this.ctx = ctx;
      this.framing = framing;
      this.frames = new FrameSender(ctx.session);
      this.traceParent = Traces.extract(ctx, UPGRADE_HEADERS);
    }

    void receive(String text) {
      JsonNode message;
      try {
        message = Json.MAPPER.readTree(text);
      } catch (Exception e) {
        sendError(ApiException.badRequest(null, "Each message must be a JSON object"));
        return;
      }
      if (message == null || !message.isObject()) {
        sendError(ApiException.badRequest(null, "Each message must be a JSON object"));
        return;
      }
      String type = message.path("type").asText(null);
      if (caller == null) {
        if (!"auth".equals(type)) {
          sendError(ApiException.unauthorized(
              "missing_api_key",
              "The first message must be {\"type\": \"auth\", " + "\"api_key\": \"<key>\"}"));
          ctx.closeSession(POLICY_VIOLATION, "authentication required");
          return;
        }
        authenticate(message.path("api_key").asText(""), true);
        return;
      }
      if (!framing.asksForInference(type)) {
        sendError(ApiException.badRequest("type", framing.notAnInference()));
        return;
      }
      if (busy) {
        sendError(ApiException.conflict(
            "inference_in_progress",
            "This connection is already running an inference; "
                + "wait for its end or open another connection"));
        return;
      }
      busy = true;
      Thread.ofVirtual().name("ws-inference").start(() -> {
        String path = ctx.session.getUpgradeRequest().getRequestURI().getPath();
        String requestId = Ids.newId("req", System.currentTimeMillis());
        // Each chat is a request of its own: its span, a child of the upgrade's trace context.
        try (Traces.Served served = Traces.serve(
            tracer,
            traceParent,
            "WebSocket " + path,
            SpanKind.SERVER,
            Attributes.of(
                TracingFilter.ROUTE,
                path,
                TracingFilter.REQUEST_ID,
                requestId,
                TracingFilter.ORGANIZATION,
                caller.orgId()))) {
          infer((ObjectNode) message, path, requestId);
        } finally {
          busy = false;
        }
      });
    }

    /** @param acknowledge answer {type: auth_ok} (an auth message; not the upgrade's header) */
    void authenticate(String secret, boolean acknowledge) {
      try {
        Principal authenticated = access.inferenceCaller(secret);
        enterOrganization(authenticated);
        caller = authenticated;
        if (acknowledge) {
          send(Json.write(Map.of("type", "auth_ok")));
        }
      } catch (ApiException e) {
        sendError(e);
        ctx.closeSession(POLICY_VIOLATION, "authentication failed");
      } catch (ClosedAlready e) {
        // refused with its own close code
      }
    }

    /**
     * The organization's WebSocket settings, applied once the caller is known: its allowlist,
     * whether it uses WebSockets at all, how many connections it may hold open, their idle time.
     */
    private void enterOrganization(Principal principal) {
      EffectiveConfig config = configs.effective(principal.organization());
      if (ctx.session.getRemoteSocketAddress() instanceof InetSocketAddress remote) {
        access.requireNetworkBoundary(
            config,
            principal,
            remote.getAddress().getHostAddress(),
            () -> ctx.session.getUpgradeRequest().getHeaders("X-Forwarded-For"),
            ctx.session.getUpgradeRequest().getHost());
      }
      if (!config.webSocketsEnabled()) {
        throw ApiException.forbidden(
            "websocket_disabled",
            "This organization has turned WebSockets off (websocket.enabled); use "
                + "POST /v1/chat/completions with \"stream\": true");
      }
      long max = config.count(ConfigField.WEBSOCKET_MAX_CONNECTIONS);
      java.util.Optional<ConcurrencySlots.Slot> slot =
          connectionsPerOrganization.take(connectionKey(principal.orgId()), max);
      if (slot.isEmpty()) {
        sendError(ApiException.rateLimited(
            "too_many_connections",
            "This organization already has " + max + " WebSocket connections open, the most its "
                + "configuration allows (websocket.max_connections); retry later",
            1));
        ctx.closeSession(TRY_AGAIN_LATER, "too many connections");
        throw new ClosedAlready();
      }
      counted = slot.get();
      ctx.session.setIdleTimeout(config.seconds(ConfigField.WEBSOCKET_IDLE_TIMEOUT));
    }

    void closeIfUnauthenticated(long now) {
      if (caller == null && now - authDeadlineNanos >= 0 && ctx.session.isOpen()) {
        sendError(ApiException.unauthorized(
            "auth_timeout",
            "No auth message within " + settings.authTimeout().toSeconds() + " seconds"));
        ctx.closeSession(POLICY_VIOLATION, "authentication timed out");
      }
    }

    private void infer(ObjectNode message, String path, String requestId) {
      try {
        JsonNode agentField = message.remove("agent");
        if (agentField != null && !agentField.isNull() && !agentField.isTextual()) {
          throw ApiException.badRequest("agent", "'agent' must be an agent slug");
        }
        String agent = agentField != null && agentField.isTextual()
            ? agentField.asText()
            : ctx.header(AgentBoundary.HEADER);
        message.remove("type");
        access.countRequest(caller);
        ChatRequest chat = ChatRequest.parse(JsonBody.received(message));
        if (chat.tooling() != null || chat.messages().stream().anyMatch(m -> m.tooling() != null)) {
          // The frames have no place for tool calls, choices or log probabilities: refused
          // rather than dropped.
          throw ApiException.invalid(
              "unsupported_parameter",
              chat.tooling() != null ? chat.tooling().fieldNames().next() : "messages",
              "Tool calling, structured output, several choices, log probabilities and logit "
                  + "bias are not carried over WebSockets; use POST /v1/chat/completions "
                  + "(streamed or not)");
        }
        try (ModelCall prepared = gateway.prepareChat(
            caller,
            Optional.empty(),
            scope(agent),
            chat,
            new Gateway.ChatOptions(true, CacheMode.ON, null, path),
            requestId)) {
          run(prepared, chat);
        }
      } catch (ApiException e) {
        Traces.failed(Traces.request(), e.code(), e.getMessage());
        sendLastError(e);
      } catch (EngineException e) {
        Traces.failed(Traces.request(), e.failure().code(), e.getMessage());
        sendLastError(e.toApiException());
      } catch (ClientGoneException e) {
        LOG.debug("WebSocket client left during an inference");
      } catch (RuntimeException e) {
        LOG.error("unexpected failure of a WebSocket inference", e);
        sendLastError(ApiException.internal());
      }
    }

    private AgentScope scope(String agent) {
      return AgentBoundary.resolve(
          agent == null || agent.isBlank() ? null : agent.strip(),
          caller,
          "name one in the message's \"agent\" field or the X-Service-Agent header");
    }

    private void run(ModelCall prepared, ChatRequest chat) {
      Replies.Header header =
          Replies.Header.create(Replies.Kind.CHAT, prepared.model().card().id());
      boolean[] first = {true};
      TokenSink sink = new TokenSink() {
        @Override
        public void begin() {}

        @Override
        public void text(String piece) {
          String frame = framing.piece(header, chat, piece, first[0]);
          if (frame != null) {
            send(frame);
          }
          first[0] = false;
        }

        @Override
        public void onClientGone(Runnable abort) {
          frames.onGone(abort);
        }
      };
      Outcome outcome = gateway.generate(prepared, sink);
      List<String> end = framing.end(header, chat, prepared, outcome);
      end.subList(0, end.size() - 1).forEach(this::send);
      sendLast(end.getLast());
    }

    void send(String text) {
      frames.send(text);
    }

    /**
     * The inference's last frame: the connection takes the next inference from here on, since a
     * client may answer this frame at once.
     */
    void sendLast(String text) {
      busy = false;
      send(text);
    }

    void sendLastError(ApiException e) {
      busy = false;
      sendError(e);
    }

    void sendError(ApiException e) {
      String frame = framing.error(ErrorResponses.openAiBody(e));
      try {
        frames.send(frame);
      } catch (ClientGoneException gone) {
        // Nobody left to tell.
      }
    }

    void gone() {
      frames.gone();
    }
  }
}
