package io.engram.inference;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.access.InferenceDoor;
import io.engram.access.Principal;
import io.engram.inference.call.CacheMode;
import io.engram.inference.call.ModelCall;
import io.engram.inference.call.ModelCalls;
import io.engram.inference.call.Origin;
import io.engram.inference.call.Outcome;
import io.engram.inference.call.PromptTokens;
import io.engram.inference.engine.GenerationRequest;
import io.engram.inference.engine.Sampling;
import io.engram.inference.engine.TokenSink;
import io.engram.inference.models.ModelCatalog;
import io.engram.inference.usage.BilledTokens;
import io.engram.inference.usage.InferenceLimits;
import io.engram.memory.AgentScope;
import io.engram.memory.EndUsers;
import io.engram.organizations.Organization;
import io.engram.platform.TokenCounter;
import io.engram.platform.http.ApiException;
import io.engram.platform.json.Json;
import io.engram.settings.ConfigField;
import io.engram.settings.EffectiveConfig;
import io.engram.settings.OrganizationConfigs;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * The generations' service (embeddings have theirs: {@link EmbeddingGateway}): resolves the model,
 * refuses what it cannot carry, applies the
 * plan's limits and budgets, and hands the admitted call to its stages ({@link ModelCalls}): the
 * memory block, the response cache, usage and budget settlement, the request log and the trace.
 * The routes only translate HTTP, SSE or WebSocket to and from these calls.
 */
public final class Gateway {
  private static final String COMPLETIONS = "/v1/completions";

  /**
   * How a chat is run beyond what its body says: memory, the cache, the assistant it speaks as,
   * and the route it came by (as the request log shows it).
   */
  public record ChatOptions(boolean memoryOn, CacheMode cache, String assistantId, String route) {}

  private final ModelCatalog catalog;
  private final InferenceLimits limits;
  private final OrganizationConfigs configs;
  private final ModelCalls calls;
  private final BilledTokens billedTokens;

  Gateway(
      ModelCatalog catalog,
      InferenceLimits limits,
      OrganizationConfigs configs,
      ModelCalls calls,
      BilledTokens billedTokens) {
    this.billedTokens = billedTokens;
    this.catalog = catalog;
    this.limits = limits;
    this.configs = configs;
    this.calls = calls;
  }

  public ModelCatalog catalog() {
    return catalog;
  }

  public InferenceLimits limits() {
    return limits;
  }

  /** A model by client-facing id as the caller's organization sees it, or 404 in OpenAI's words. */
  public ModelCatalog.Entry model(Principal caller, String id) {
    mayUse(caller, id);
    return catalog.find(caller.orgId(), id).orElseThrow(() -> ModelCatalog.notFound(id));
  }

  /** A credential limited to some models calls only those (403 naming the ones it may). */
  public static void mayUse(Principal caller, String modelId) {
    if (!caller.mayUse(modelId)) {
      throw ApiException.forbidden(
          "model_not_allowed",
          "This credential may call only the models " + String.join(", ", caller.models())
              + ", not '" + modelId + "'");
    }
  }

  /** The current gateway (context access tokens) serves its one advertised model. */
  private ModelCatalog.Entry advertised(String id) {
    return catalog
        .advertised()
        .filter(e -> e.card().id().equals(id))
        .orElseThrow(() -> ModelCatalog.notFound(id));
  }

  /** The organization's settings in force, looked up once a call (null: no organization). */
  private EffectiveConfig config(Principal caller) {
    return caller.organization() == null ? null : configs.effective(caller.organization());
  }

  /**
   * The model a request names, or, when it names none, DEFAULT_MODEL as in force for the
   * organization (the spec: without it, a request must name its model).
   */
  private static String modelId(EffectiveConfig config, String requested) {
    if (requested != null) {
      return requested;
    }
    return config
        .variable("DEFAULT_MODEL")
        .orElseThrow(() -> ApiException.badRequest(
            "model",
            "'model' is required: this organization has no DEFAULT_MODEL (set one with "
                + "POST /v1/organizations/{org_id}/env)"));
  }

  /**
   * The model a chat of the caller would run on: context tokens reach the advertised one and the
   * routed models their organization sees (the server's and its own), not uploads.
   */
  private ModelCatalog.Entry chatModel(Principal caller, EffectiveConfig config, String requested) {
    String modelId = modelId(config, requested);
    if (caller.kind() != Principal.Kind.CONTEXT_TOKEN) {
      return model(caller, modelId);
    }
    mayUse(caller, modelId);
    return catalog.routed(caller.orgId(), modelId).orElseGet(() -> advertised(modelId));
  }

  /** Whether the model a chat of the caller would run on can call tools. */
  public boolean callsTools(Principal caller, String requestedModel) {
    return chatModel(caller, config(caller), requestedModel)
        .engine()
        .carries("tools", Json.MAPPER.nullNode());
  }

  /**
   * A chat's input tokens before any is generated: counted by the provider of the deployment its
   * model would go to, where that provider's API counts, else by the gateway as admission does
   * (the messages and the tools). The memory block a chat adds is not in it: it depends on the
   * question and is reported on the answer (X-Engram-Memory-Tokens).
   */
  public TokenCount countTokens(Principal caller, ChatRequest chat) {
    EffectiveConfig config = config(caller);
    ModelCatalog.Entry model = chatModel(caller, config, chat.model());
    ObjectNode asked = CarriedParameters.asked(chat);
    OptionalInt counted =
        model.engine().countTokens(engineRequest(caller, config, model, chat, asked, false));
    if (counted.isPresent()) {
      return new TokenCount(counted.getAsInt(), TokenCount.PROVIDER);
    }
    JsonNode tools = asked == null ? null : asked.get("tools");
    int toolTokens = tools == null ? 0 : TokenCounter.count(tools.toString());
    return new TokenCount(PromptTokens.chat(chat.messages()) + toolTokens, TokenCount.GATEWAY);
  }

  /** The chat as its model's engine is asked it, under the organization's settings in force. */
  private static GenerationRequest engineRequest(
      Principal caller,
      EffectiveConfig config,
      ModelCatalog.Entry model,
      ChatRequest chat,
      ObjectNode asked,
      boolean stream) {
    return new GenerationRequest(
        model.engineModel(),
        chat.messages(),
        null,
        chat.sampling(),
        stream,
        chat.user(),
        EngineVariables.requestTimeout(config),
        asked,
        caller.orgId(),
        EngineVariables.engineShare(config, caller.organization()),
        EngineVariables.dropsParameters(config));
  }

  /**
   * A chat ready for its engine: admitted (holding the slot {@code atDoor} brought, if any), its
   * memory retrieved and injected. {@code requestId} goes with it into every record it leaves;
   * {@code assistantId} (null: none) is the assistant it speaks as, whose budgets it counts in.
   */
  public ModelCall prepareChat(
      Principal caller,
      Optional<InferenceDoor.Pass> atDoor,
      AgentScope boundary,
      ChatRequest chat,
      ChatOptions options,
      String requestId) {
    // OpenAI's `user` names the end user whose memories (with the shared ones) the chat sees.
    AgentScope scope = EndUsers.withNamed(boundary, caller, chat.user(), "user");
    Origin origin = new Origin(
        options.route(), scope.agent(), scope.user(), options.assistantId(), calls.now());
    EffectiveConfig config = config(caller);
    ModelCatalog.Entry model = chatModel(caller, config, chat.model());
    ObjectNode asked = CarriedParameters.asked(chat);
    CarriedParameters.refuseWhatIsNotCarried(
        model, asked, chat.sampling(), chat.messages(), EngineVariables.dropsParameters(config));
    int conversationTokens = PromptTokens.chat(chat.messages());
    boolean withMemory = options.memoryOn() && chat.memory().enabled();
    // The memory block takes what the context has left, never the reply's room.
    int memoryRoom = withMemory
        ? (int) Math.min(
            chat.memory().maxTokens() != null
                ? chat.memory().maxTokens()
                : config.count(ConfigField.MEMORY_CONTEXT_TOKENS),
            model.card().contextLength()
                - conversationTokens
                - reservedReply(chat.sampling())
                - PromptTokens.PER_MESSAGE)
        : 0;
    ModelCall.Admission admission = calls.admit(
        caller,
        model.card().id(),
        origin,
        requestId,
        () -> admit(
            caller,
            atDoor,
            model,
            chat.sampling(),
            conversationTokens,
            Math.max(0, memoryRoom),
            options.assistantId()));
    return prepared(ModelCall.generation(
        caller,
        config,
        model,
        engineRequest(caller, config, model, chat, asked, chat.stream()),
        conversationTokens,
        admission,
        requestId,
        origin,
        withMemory
            ? new ModelCall.MemoryAsk(
                scope,
                chat.memory().limit(),
                memoryRoom,
                config.share(ConfigField.MEMORY_RELEVANCE_FLOOR))
            : null,
        options.cache()));
  }

  public ModelCall prepareCompletion(
      Principal caller,
      Optional<InferenceDoor.Pass> atDoor,
      CompletionRequest completion,
      CacheMode cacheMode,
      String requestId) {
    Origin origin = new Origin(COMPLETIONS, null, null, null, calls.now());
    EffectiveConfig config = config(caller);
    ModelCatalog.Entry model = model(caller, modelId(config, completion.model()));
    int promptTokens = TokenCounter.count(completion.prompt());
    ModelCall.Admission admission = calls.admit(
        caller,
        model.card().id(),
        origin,
        requestId,
        () -> admit(caller, atDoor, model, completion.sampling(), promptTokens, 0, null));
    return prepared(ModelCall.generation(
        caller,
        config,
        model,
        new GenerationRequest(
            model.engineModel(),
            null,
            completion.prompt(),
            completion.sampling(),
            completion.stream(),
            completion.user(),
            EngineVariables.requestTimeout(config),
            null,
            caller.orgId(),
            EngineVariables.engineShare(config, caller.organization()),
            EngineVariables.dropsParameters(config)),
        promptTokens,
        admission,
        requestId,
        origin,
        null,
        cacheMode));
  }

  /** The call with what its stages add before it is answered; its slot let go if they fail. */
  private ModelCall prepared(ModelCall call) {
    try {
      calls.prepare(call);
      return call;
    } catch (RuntimeException e) {
      call.close();
      throw e;
    }
  }

  /**
   * Runs the prepared call on its engine through its stages, delivering to {@code sink}; its
   * usage is charged however it ends (see {@link io.engram.inference.call.Ended}).
   */
  public Outcome generate(ModelCall call, TokenSink sink) {
    return calls.generate(call, sink);
  }

  /** The reply's room the context must keep: max_tokens, or one token when the caller left it out. */
  private static int reservedReply(Sampling sampling) {
    return sampling.maxTokens() == null ? 1 : sampling.maxTokens();
  }

  /**
   * The checks every generation passes before work starts, cheapest and permanent first: tokens
   * per request and context (400s), then the hourly budget, a concurrency slot and the budgets in
   * money, which hold the most the request may cost at its model's prices (429s).
   */
  private ModelCall.Admission admit(
      Principal caller,
      Optional<InferenceDoor.Pass> atDoor,
      ModelCatalog.Entry model,
      Sampling sampling,
      int promptTokens,
      int memoryTokens,
      String assistantId) {
    Organization org = caller.organization();
    if (sampling.maxTokens() != null) {
      limits.checkTokensPerRequest(org, sampling.maxTokens(), "max_tokens");
    }
    int reserved = reservedReply(sampling);
    PromptTokens.checkContext(promptTokens + reserved, model.card().contextLength());
    long longest = sampling.maxTokens() != null
        ? sampling.maxTokens()
        : defaultMaxTokens(org, model.card().contextLength(), promptTokens);
    // The prompt and memory are reserved at what the model's answers charge for them.
    InferenceLimits.TokenDemand demand = new InferenceLimits.TokenDemand(
        promptTokens,
        reserved,
        longest,
        memoryTokens,
        billedTokens.ratio(org.id(), model.card().id()));
    InferenceLimits.Permit permit = limits.admit(
        caller,
        atDoor,
        demand,
        new InferenceLimits.Spending(
            assistantId, model.pricing().costNanos(demand.inputsCharged(), longest)));
    return new ModelCall.Admission(longest, permit);
  }

  /** The longest reply of a request without max_tokens: the spec's 2048, within the plan and the context. */
  private long defaultMaxTokens(Organization org, int contextLength, int promptTokens) {
    long max = Math.min(Sampling.DEFAULT_MAX_TOKENS, limits.tokensPerRequest(org));
    return Math.max(1, Math.min(max, contextLength - promptTokens));
  }
}
