package io.engram.inference;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.access.Access;
import io.engram.access.Principal;
import io.engram.access.Requires;
import io.engram.actions.CapabilityExecutor;
import io.engram.capabilities.AssistantService;
import io.engram.capabilities.CapabilityVersion;
import io.engram.inference.call.ModelCall;
import io.engram.memory.AgentBoundary;
import io.engram.memory.AgentScope;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.HttpServer;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.engram.platform.json.Json;
import io.javalin.http.Context;
import java.time.Clock;
import java.util.HashSet;
import java.util.Set;

/**
 * Chat as one of the organization's assistants: {@code POST /v1/assistants/{assistantId}/chat/
 * completions}, and inside an agent's boundary {@code /v1/agents/{agentSlug}/assistants/
 * {assistantId}/chat/completions} (the agent bounds memory, the assistant decides what may act).
 * The capability set in force when the message arrived decides the tools the model is offered;
 * Engram carries out the model's calls of them ({@link CapabilityLoop}). Otherwise it is the chat
 * completions route: same body, memory, limits and answer. {@code X-Engram-Capability-Set-Version}
 * and {@code X-Engram-Assistant-Tools} say which set and which tools the message had.
 */
public final class AssistantChatRoutes implements RouteModule {
  static final String ROUTE = "/v1/assistants/{assistantId}/chat/completions";
  static final String AGENT_ROUTE =
      "/v1/agents/{agentSlug}/assistants/{assistantId}/chat/completions";
  public static final String SET_VERSION_HEADER = "X-Engram-Capability-Set-Version";
  public static final String TOOLS_HEADER = "X-Engram-Assistant-Tools";

  private final Gateway gateway;
  private final AssistantService assistants;
  private final CapabilityExecutor executor;
  private final ChatResponder responder;
  private final Clock clock;
  private final long maxBodyBytes;
  private final int maxSteps;

  AssistantChatRoutes(
      Gateway gateway,
      AssistantService assistants,
      CapabilityExecutor executor,
      KeepAlives keepAlives,
      Clock clock,
      long maxBodyBytes,
      int maxSteps) {
    this.gateway = gateway;
    this.assistants = assistants;
    this.executor = executor;
    this.responder = new ChatResponder(keepAlives);
    this.clock = clock;
    this.maxBodyBytes = maxBodyBytes;
    this.maxSteps = maxSteps;
  }

  @Override
  public void register(Routes routes) {
    routes.exposeHeaders(SET_VERSION_HEADER, TOOLS_HEADER);
    routes
        .post(ROUTE, Requires.runsModel(), this::chat)
        .post(AGENT_ROUTE, Requires.runsModel(), this::chat);
  }

  private void chat(Context ctx) {
    Principal caller = Access.caller(ctx);
    CapabilityVersion inForce =
        assistants.versionForMessage(caller, ctx.pathParam("assistantId"), clock.instant());
    ChatRequest chat = ChatRequest.parse(JsonBody.parseOpenAi(ctx, maxBodyBytes));
    AgentScope scope = AgentBoundary.of(ctx, caller, "agentSlug", AGENT_ROUTE);
    CapabilityExecutor.Offer offer = gateway.callsTools(caller, chat.model())
        ? executor.offer(caller, inForce)
        : executor.nothing(inForce);
    ChatRequest asAssistant = withTools(chat, offer);
    ctx.header(SET_VERSION_HEADER, String.valueOf(inForce.version()));
    ctx.header(TOOLS_HEADER, String.join(",", offer.tools().keySet()));
    String requestId = HttpServer.requestId(ctx);
    try (ModelCall prepared = GenerationRoutes.prepared(
        ctx, gateway, caller, scope, asAssistant, ctx.pathParam("assistantId"))) {
      CapabilityLoop loop = new CapabilityLoop(
          gateway, executor, caller, scope.agent(), offer, clientTools(chat), requestId, maxSteps);
      responder.respond(
          ctx,
          prepared,
          Replies.Header.create(Replies.Kind.CHAT, prepared.model().card().id()),
          chat.includeUsage(),
          sink -> loop.run(prepared, sink));
    }
  }

  private static Set<String> clientTools(ChatRequest chat) {
    Set<String> names = new HashSet<>();
    if (chat.tooling() != null) {
      chat.tooling()
          .path("tools")
          .forEach(tool -> names.add(tool.path("function").path("name").asText()));
    }
    return names;
  }

  /**
   * The client's request with the capability tools added to its own; a client tool named like a
   * capability would be ambiguous (400), and several choices cannot each run their own actions.
   */
  private static ChatRequest withTools(ChatRequest chat, CapabilityExecutor.Offer offer) {
    if (offer.tools().isEmpty()) {
      return chat;
    }
    ObjectNode tooling =
        chat.tooling() == null ? Json.MAPPER.createObjectNode() : chat.tooling().deepCopy();
    if (tooling.has("n")) {
      throw ApiException.invalid(
          "unsupported_parameter",
          "n",
          "A conversation as an assistant with capabilities gives one choice");
    }
    ArrayNode tools =
        tooling.has("tools") ? (ArrayNode) tooling.get("tools") : tooling.putArray("tools");
    for (int i = 0; i < tools.size(); i++) {
      JsonNode name = tools.get(i).path("function").path("name");
      if (offer.offers(name.asText())) {
        throw ApiException.badRequest(
            "tools[" + i + "].function.name",
            "'" + name.asText() + "' is a capability of this assistant; name the tool otherwise");
      }
    }
    offer.tools().values().forEach(tools::add);
    return new ChatRequest(
        chat.model(),
        chat.messages(),
        chat.sampling(),
        chat.stream(),
        chat.includeUsage(),
        chat.user(),
        chat.memory(),
        tooling,
        chat.passedOn());
  }
}
