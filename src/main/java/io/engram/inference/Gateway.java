package io.engram.inference;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.access.InferenceDoor;
import io.engram.access.Principal;
import io.engram.inference.engine.ChatMessage;
import io.engram.inference.engine.ClientGoneException;
import io.engram.inference.engine.Embeds;
import io.engram.inference.engine.Engine;
import io.engram.inference.engine.EngineException;
import io.engram.inference.engine.ForwardingSink;
import io.engram.inference.engine.Generation;
import io.engram.inference.engine.GenerationRequest;
import io.engram.inference.engine.Sampling;
import io.engram.inference.engine.TokenSink;
import io.engram.inference.models.ModelCatalog;
import io.engram.inference.usage.BilledTokens;
import io.engram.inference.usage.InferenceLimits;
import io.engram.inference.usage.RequestLog;
import io.engram.inference.usage.RequestRecord;
import io.engram.inference.usage.UsageLedger;
import io.engram.instances.ConversationHistory;
import io.engram.memory.AgentScope;
import io.engram.memory.Embedder;
import io.engram.memory.EndUsers;
import io.engram.memory.MemoryService;
import io.engram.organizations.Organization;
import io.engram.organizations.Tier;
import io.engram.platform.TokenCounter;
import io.engram.platform.http.ApiException;
import io.engram.platform.json.Json;
import io.engram.platform.net.Egress;
import io.engram.platform.net.OutboundBlocked;
import io.engram.platform.tracing.Traces;
import io.engram.settings.ConfigField;
import io.engram.settings.EffectiveConfig;
import io.engram.settings.OrganizationConfigs;
import io.opentelemetry.api.trace.Span;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * The inference requests' service: resolves the model, applies the plan's limits, puts a
 * conversation inside the organization's memory, and accounts the usage once the engine is done.
 * The routes only translate HTTP, SSE or WebSocket to and from these calls.
 */
public final class Gateway {
  /** OpenAI's accounting of a chat prompt: a few tokens of framing per message and for the reply. */
  private static final int TOKENS_PER_MESSAGE = 4;

  private static final int TOKENS_FOR_REPLY = 3;

  /** WORKER_PROCESSES as a number of workers (compiled once: it is read on every generation). */
  private static final Pattern WORKERS = Pattern.compile("\\d{1,3}");

  /**
   * What a request asks of the response cache (the {@code X-Engram-Cache} header): use it (the
   * default, when the organization turned it on), leave it out, or answer anew and keep that.
   */
  public enum CacheMode {
    ON,
    OFF,
    REFRESH;

    /** The header's value (on, off, refresh; absent: on), or a 400 naming the header. */
    static CacheMode of(String header) {
      if (header == null) {
        return ON;
      }
      return switch (header.strip().toLowerCase(java.util.Locale.ROOT)) {
        case "on" -> ON;
        case "off" -> OFF;
        case "refresh" -> REFRESH;
        default ->
          throw ApiException.badRequest(
              CACHE_HEADER, "'" + CACHE_HEADER + "' is on, off or refresh, not '" + header + "'");
      };
    }
  }

  static final String CACHE_HEADER = "X-Engram-Cache";

  /**
   * How a chat is run beyond what its body says: memory, the cache, the assistant it speaks as,
   * and the route it came by (as the request log shows it).
   */
  public record ChatOptions(boolean memoryOn, CacheMode cache, String assistantId, String route) {}

  /** Where a request came from and when it started: its record in the request log. */
  record Origin(
      String route,
      String agent,
      String endUser,
      String assistantId,
      long startedNanos,
      long atMillis,
      int step) {
    Origin(
        String route,
        String agent,
        String endUser,
        String assistantId,
        long startedNanos,
        long atMillis) {
      this(route, agent, endUser, assistantId, startedNanos, atMillis, 0);
    }

    /** The next step of a tool loop, which the log keeps as its own record. */
    Origin next() {
      return new Origin(route, agent, endUser, assistantId, System.nanoTime(), atMillis, step + 1);
    }

    /** The record's id: the request's, and for a tool loop's later steps the step's number. */
    String recordId(String requestId) {
      return step == 0 ? requestId : requestId + "." + step;
    }
  }

  /**
   * How a request met the response cache: {@code key} null when it was not consulted (off for the
   * organization or the request), {@code hit} the kept answer it is served from (null: a miss).
   */
  record Caching(String key, ResponseCache.Entry hit, long ttlSeconds) {
    static final Caching OFF = new Caching(null, null, 0);

    /** The X-Engram-Cache answer: hit, miss, or null when the cache was not consulted. */
    String status() {
      return key == null ? null : hit != null ? "hit" : "miss";
    }
  }

  /** A request ready for its engine, holding a concurrency slot until {@link #close()}. */
  public record Prepared(
      ModelCatalog.Entry model,
      GenerationRequest request,
      MemoryContext.Injection memory,
      int promptTokens,
      InferenceLimits.Permit permit,
      String requestId,
      Caching cache,
      Origin origin)
      implements AutoCloseable {

    /** The hour's token budget after this request's reservation; null when the plan has none. */
    public InferenceLimits.TokenBudget budget() {
      return permit.budget();
    }

    public List<String> memoryIds() {
      return memory.memoryIds();
    }

    public int memoryTokens() {
      return memory.tokens();
    }

    /** Whether memory was asked for but its index could not be reached (the chat went on without). */
    public boolean memoryUnavailable() {
      return memory.unavailable();
    }

    @Override
    public void close() {
      permit.close();
    }
  }

  private final ModelCatalog catalog;
  private final Embedder embedder;
  private final MemoryContext memory;
  private final InferenceLimits limits;
  private final UsageLedger usage;
  private final InferenceMetrics metrics;
  private final OrganizationConfigs configs;
  private final ConversationHistory history;
  private final Egress egress;
  private final ResponseCache cache;
  private final RequestLog requests;
  private final BilledTokens billedTokens = new BilledTokens();

  Gateway(
      ModelCatalog catalog,
      MemoryService memory,
      InferenceLimits limits,
      UsageLedger usage,
      InferenceMetrics metrics,
      OrganizationConfigs configs,
      ConversationHistory history,
      Egress egress,
      Embedder embedder,
      ResponseCache cache,
      RequestLog requests) {
    this.embedder = embedder;
    this.cache = cache;
    this.requests = requests;
    this.history = history;
    this.egress = egress;
    this.catalog = catalog;
    this.memory = new MemoryContext(memory);
    this.limits = limits;
    this.usage = usage;
    this.metrics = metrics;
    this.configs = configs;
  }

  public ModelCatalog catalog() {
    return catalog;
  }

  /** Vectors of the inputs and the hour's budget after them (null when the plan has none). */
  public record Embedded(Embedder.Embeddings embeddings, InferenceLimits.TokenBudget budget) {}

  /**
   * Embeds the inputs. Embedding tokens are tokens: they count against the plan's hourly budget
   * and concurrency too, reserved as the gateway counts them and charged as the model read them.
   */
  public Embedded embed(
      Principal caller, Optional<InferenceDoor.Pass> atDoor, String model, List<String> inputs) {
    long estimate = inputs.stream().mapToLong(TokenCounter::count).sum();
    try (InferenceLimits.Permit permit = GatewaySpans.limits(() -> limits.admit(
        caller,
        atDoor,
        InferenceLimits.TokenDemand.exactly(Math.max(1, estimate)),
        InferenceLimits.Spending.FREE))) {
      long started = System.nanoTime();
      Embedder.Embeddings embeddings = embedder.embedCounted(inputs);
      // Recorded before the permit settles, so the hour never misses these tokens in between.
      usage.record(
          caller.orgId(),
          caller.credentialId(),
          model,
          "",
          new Generation.Usage(embeddings.tokens(), 0),
          0,
          0);
      usage.finished(
          caller.orgId(), caller.credentialId(), model, "", false, System.nanoTime() - started);
      permit.charge(embeddings.tokens());
      GatewaySpans.embedded(model, embeddings.tokens());
      return new Embedded(embeddings, permit.budget());
    }
  }

  /**
   * Embeds the inputs on a routed embedding model: admitted and charged as the in-process model's
   * embeddings are (the provider's token count when it gives one, else the gateway's), recorded
   * under the deployment that answered, with the model's cost.
   */
  public Embedded embedRouted(
      Principal caller,
      Optional<InferenceDoor.Pass> atDoor,
      String model,
      List<String> inputs,
      Integer dimensions,
      String user) {
    ModelCatalog.Entry entry = catalog
        .routedEmbedding(caller.orgId(), model)
        .orElseThrow(() -> ModelCatalog.notFound(model));
    long estimate = inputs.stream().mapToLong(TokenCounter::count).sum();
    // Admitted at what the provider is expected to bill: its count, not ours, is what is charged.
    long expected = billedTokens.expected(caller.orgId(), model, estimate);
    try (InferenceLimits.Permit permit = GatewaySpans.limits(() -> limits.admit(
        caller,
        atDoor,
        InferenceLimits.TokenDemand.exactly(expected),
        new InferenceLimits.Spending(null, entry.pricing().costNanos(expected, 0))))) {
      long started = System.nanoTime();
      Embeds.Vectors vectors;
      try {
        vectors = ((Embeds) entry.engine())
            .embed(inputs, dimensions, user, requestTimeout(caller.organization()), caller.orgId());
      } catch (RuntimeException e) {
        usage.record(
            caller.orgId(), caller.credentialId(), model, "", new Generation.Usage(0, 0), 0, 0);
        usage.finished(
            caller.orgId(), caller.credentialId(), model, "", true, System.nanoTime() - started);
        throw e;
      }
      int tokens = vectors.tokens() >= 0 ? vectors.tokens() : (int) estimate;
      billedTokens.billed(caller.orgId(), model, estimate, vectors.tokens());
      String deployment = vectors.deployment() == null ? "" : vectors.deployment();
      long cost = entry.pricing().costNanos(tokens, 0);
      usage.record(
          caller.orgId(),
          caller.credentialId(),
          model,
          deployment,
          new Generation.Usage(tokens, 0),
          0,
          cost);
      usage.finished(
          caller.orgId(),
          caller.credentialId(),
          model,
          deployment,
          false,
          System.nanoTime() - started);
      permit.charge(tokens);
      permit.chargeCost(cost);
      GatewaySpans.embedded(model, tokens);
      return new Embedded(new Embedder.Embeddings(vectors.vectors(), tokens), permit.budget());
    }
  }

  ConversationHistory history() {
    return history;
  }

  public InferenceLimits limits() {
    return limits;
  }

  public UsageLedger usage() {
    return usage;
  }

  public RequestLog requests() {
    return requests;
  }

  /** Drops the response cache's answers past their time nobody asked for again. */
  void sweepCache() {
    cache.sweep();
  }

  /** Generations running on an engine now. */
  public int generationsInFlight() {
    return metrics.inFlight();
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
  ModelCatalog.Entry advertised(String id) {
    return catalog
        .advertised()
        .filter(e -> e.card().id().equals(id))
        .orElseThrow(() -> ModelCatalog.notFound(id));
  }

  /** REQUEST_TIMEOUT as in force for the organization: the longest wait for its model's answer. */
  private Duration requestTimeout(Organization org) {
    return configs
        .effective(org)
        .variable("REQUEST_TIMEOUT")
        .map(seconds -> Duration.ofSeconds(Long.parseLong(seconds)))
        .orElse(null);
  }

  /**
   * How many of an in-process model's workers the organization's generations may hold at once:
   * WORKER_PROCESSES as in force for it, else by plan (1 on Spark and below, 2 from Seed, 4 from
   * Scale, every worker on Dedicated), so one organization cannot take a shared model whole.
   */
  private GenerationRequest.Share engineShare(Organization org) {
    return new GenerationRequest.Share(configs
        .effective(org)
        .variable("WORKER_PROCESSES")
        .filter(value -> WORKERS.matcher(value.strip()).matches())
        .map(value -> Integer.parseInt(value.strip()))
        .orElseGet(() -> planWorkers(org.plan().tier())));
  }

  static int planWorkers(Tier tier) {
    if (tier.atLeast(Tier.DEDICATED)) {
      return Integer.MAX_VALUE;
    }
    if (tier.atLeast(Tier.SCALE)) {
      return 4;
    }
    return tier.atLeast(Tier.SEED) ? 2 : 1;
  }

  /**
   * The model a request names, or, when it names none, DEFAULT_MODEL as in force for the
   * organization (the spec: without it, a request must name its model).
   */
  private String modelId(Principal caller, String requested) {
    if (requested != null) {
      return requested;
    }
    return configs
        .effective(caller.organization())
        .variable("DEFAULT_MODEL")
        .orElseThrow(() -> ApiException.badRequest(
            "model",
            "'model' is required: this organization has no DEFAULT_MODEL (set one with "
                + "POST /v1/organizations/{org_id}/env)"));
  }

  /**
   * Tool calling, structured output, several choices, log probabilities, logit bias and the
   * parameters passed on as sent reach a model only through an engine that carries them; for the
   * others they are refused by name, never dropped.
   */
  private void refuseWhatIsNotCarried(
      Principal caller,
      ModelCatalog.Entry model,
      ObjectNode asked,
      Sampling sampling,
      List<ChatMessage> messages) {
    Engine engine = model.engine();
    String param = firstNotCarried(engine, sampling.asSent());
    if (param == null) {
      param = firstNotCarried(engine, asked);
    }
    if (param == null
        && messages.stream()
            .anyMatch(m -> m.tooling() != null
                && (m.tooling().has("tool_calls") || m.tooling().has("tool_call_id")))
        && !engine.carries("tools", Json.MAPPER.nullNode())) {
      param = "messages";
    }
    for (int i = 0; param == null && i < messages.size(); i++) {
      ObjectNode tooling = messages.get(i).tooling();
      if (tooling != null
          && tooling.has(ChatRequest.PARTS)
          && !engine.carries(Engine.IMAGES, tooling.get(ChatRequest.PARTS))) {
        param = "messages[" + i + "].content";
      }
    }
    if (param == null || engine.callsOut() && dropsParameters(caller)) {
      return;
    }
    if (engine.callsOut()) {
      throw ApiException.invalid(
          "unsupported_parameter",
          param,
          "The model '" + model.card().id() + "' cannot carry out '" + param + "' at this value "
              + "on its provider's API; leave it out, or set the organization's DROP_PARAMS "
              + "variable to true to have such parameters dropped");
    }
    throw ApiException.invalid(
        "unsupported_parameter",
        param,
        "The model '" + model.card().id() + "' runs on the in-process engine, which does not "
            + "carry out '" + param + "' (it calls no tools, constrains its output to JSON "
            + "only as json_object, gives one choice without log probabilities or logit bias, "
            + "and takes no other parameter than the sampling ones); use a model served by a "
            + "provider");
  }

  private static String firstNotCarried(Engine engine, ObjectNode fields) {
    if (fields != null) {
      for (var field : fields.properties()) {
        if (!engine.carries(field.getKey(), field.getValue())) {
          return field.getKey();
        }
      }
    }
    return null;
  }

  /**
   * The organization's DROP_PARAMS: parameters a provider's API cannot carry are left out rather
   * than refused (as LiteLLM's drop_params); the in-process engine refuses them whatever it says.
   */
  private boolean dropsParameters(Principal caller) {
    return caller.organization() != null
        && Boolean.parseBoolean(
            configs.effective(caller.organization()).variable("DROP_PARAMS").orElse("false"));
  }

  /** What a chat asks of its engine beyond the conversation and sampling, in one object. */
  private static ObjectNode asked(ChatRequest chat) {
    if (chat.passedOn() == null) {
      return chat.tooling();
    }
    ObjectNode all = chat.passedOn().deepCopy();
    return chat.tooling() == null ? all : all.setAll(chat.tooling());
  }

  /**
   * The model a chat of the caller would run on: context tokens reach the advertised one and the
   * routed models their organization sees (the server's and its own), not uploads.
   */
  private ModelCatalog.Entry chatModel(Principal caller, String requested) {
    String modelId = modelId(caller, requested);
    if (caller.kind() != Principal.Kind.CONTEXT_TOKEN) {
      return model(caller, modelId);
    }
    mayUse(caller, modelId);
    return catalog.routed(caller.orgId(), modelId).orElseGet(() -> advertised(modelId));
  }

  /** Whether the model a chat of the caller would run on can call tools. */
  public boolean callsTools(Principal caller, String requestedModel) {
    return chatModel(caller, requestedModel).engine().carries("tools", Json.MAPPER.nullNode());
  }

  /**
   * A chat ready for its engine: admitted (holding the slot {@code atDoor} brought, if any), its
   * memory retrieved and injected. {@code requestId} goes with it into every record it leaves;
   * {@code assistantId} (null: none) is the assistant it speaks as, whose budgets it counts in.
   */
  public Prepared prepareChat(
      Principal caller,
      Optional<InferenceDoor.Pass> atDoor,
      AgentScope boundary,
      ChatRequest chat,
      ChatOptions options,
      String requestId) {
    // OpenAI's `user` names the end user whose memories (with the shared ones) the chat sees.
    AgentScope scope = EndUsers.withNamed(boundary, caller, chat.user(), "user");
    Origin origin = new Origin(
        options.route(),
        scope.agent(),
        scope.user(),
        options.assistantId(),
        System.nanoTime(),
        requests.now());
    ModelCatalog.Entry model = chatModel(caller, chat.model());
    ObjectNode asked = asked(chat);
    refuseWhatIsNotCarried(caller, model, asked, chat.sampling(), chat.messages());
    int conversationTokens = chatTokens(chat.messages());
    boolean withMemory = options.memoryOn() && chat.memory().enabled();
    EffectiveConfig config = withMemory ? configs.effective(caller.organization()) : null;
    // The memory block takes what the context has left, never the reply's room.
    int memoryRoom = withMemory
        ? (int) Math.min(
            chat.memory().maxTokens() != null
                ? chat.memory().maxTokens()
                : config.count(ConfigField.MEMORY_CONTEXT_TOKENS),
            model.card().contextLength()
                - conversationTokens
                - reservedReply(chat.sampling())
                - TOKENS_PER_MESSAGE)
        : 0;
    Admission admission = logRefusal(
        caller,
        model,
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
    try {
      MemoryContext.Injection injection = MemoryContext.Injection.NONE;
      if (withMemory) {
        injection = memory.retrieve(
            caller,
            scope,
            chat.messages(),
            chat.memory().limit(),
            (int) Math.min(memoryRoom, admission.permit().memoryAllowance()),
            config.share(ConfigField.MEMORY_RELEVANCE_FLOOR),
            requestId);
      }
      int promptTokens = injection.isEmpty()
          ? conversationTokens
          : conversationTokens + injection.tokens() + TOKENS_PER_MESSAGE;
      GenerationRequest request = new GenerationRequest(
          model.engineModel(),
          injection.applyTo(chat.messages()),
          null,
          resolve(chat.sampling(), admission, model.card().contextLength(), promptTokens),
          chat.stream(),
          chat.user(),
          requestTimeout(caller.organization()),
          asked,
          caller.orgId(),
          engineShare(caller.organization()));
      GatewaySpans.asked(request, model.card().id(), origin);
      return new Prepared(
          model,
          request,
          injection,
          promptTokens,
          admission.permit(),
          requestId,
          caching(caller, model, request, injection::versions, options.cache()),
          origin);
    } catch (RuntimeException e) {
      admission.permit().close();
      throw e;
    }
  }

  /**
   * The same conversation one step on: the model's turn and what answers it (tool results)
   * appended, with the same model, memory, concurrency slot and reply limit. Admission was paid
   * once, for the conversation; each step's usage is recorded when it runs. The context must still
   * hold the grown prompt and the reply (400 context_length_exceeded otherwise). {@code tooling}
   * is the step's (the last step of a long conversation offers no more calls).
   */
  public Prepared continued(Prepared prepared, List<ChatMessage> added, ObjectNode tooling) {
    GenerationRequest before = prepared.request();
    List<ChatMessage> messages = new java.util.ArrayList<>(before.messages());
    messages.addAll(added);
    int promptTokens = prepared.promptTokens() + chatTokens(added) - TOKENS_FOR_REPLY;
    checkContext(
        promptTokens + before.sampling().maxTokens(), prepared.model().card().contextLength());
    GenerationRequest request = new GenerationRequest(
        before.model(),
        List.copyOf(messages),
        null,
        before.sampling(),
        before.stream(),
        before.user(),
        before.timeout(),
        tooling,
        before.orgId(),
        before.share());
    return new Prepared(
        prepared.model(),
        request,
        prepared.memory(),
        promptTokens,
        prepared.permit(),
        prepared.requestId(),
        Caching.OFF,
        prepared.origin().next());
  }

  public Prepared prepareCompletion(
      Principal caller,
      Optional<InferenceDoor.Pass> atDoor,
      CompletionRequest completion,
      CacheMode cacheMode,
      String requestId) {
    Origin origin = new Origin(COMPLETIONS, null, null, null, System.nanoTime(), requests.now());
    ModelCatalog.Entry model = model(caller, modelId(caller, completion.model()));
    int promptTokens = TokenCounter.count(completion.prompt());
    Admission admission = logRefusal(
        caller,
        model,
        origin,
        requestId,
        () -> admit(caller, atDoor, model, completion.sampling(), promptTokens, 0, null));
    GenerationRequest request = new GenerationRequest(
        model.engineModel(),
        null,
        completion.prompt(),
        resolve(completion.sampling(), admission, model.card().contextLength(), promptTokens),
        completion.stream(),
        completion.user(),
        requestTimeout(caller.organization()),
        null,
        caller.orgId(),
        engineShare(caller.organization()));
    GatewaySpans.asked(request, model.card().id(), origin);
    return new Prepared(
        model,
        request,
        MemoryContext.Injection.NONE,
        promptTokens,
        admission.permit(),
        requestId,
        caching(caller, model, request, List::of, cacheMode),
        origin);
  }

  private static final String COMPLETIONS = "/v1/completions";

  /**
   * Admits the request, or keeps its refusal (a limit or budget's 429) in the request log before
   * the client gets it.
   */
  private Admission logRefusal(
      Principal caller,
      ModelCatalog.Entry model,
      Origin origin,
      String requestId,
      java.util.function.Supplier<Admission> admit) {
    try {
      return GatewaySpans.limits(admit);
    } catch (ApiException refused) {
      if (caller.organization() != null) {
        requests.add(RequestRecord.refused(
            who(caller, origin, requestId, model),
            refused.status(),
            refused.code(),
            (System.nanoTime() - origin.startedNanos()) / 1_000_000));
      }
      throw refused;
    }
  }

  /**
   * Looks the request up in the organization's response cache, when the organization turned it
   * on ({@code cache.enabled}) and the request did not turn it off; a refresh is a miss whose
   * answer is kept. {@code memories}: the injected memories' ids and versions.
   */
  private Caching caching(
      Principal caller,
      ModelCatalog.Entry model,
      GenerationRequest request,
      Supplier<List<String>> memories,
      CacheMode mode) {
    if (mode == CacheMode.OFF || caller.organization() == null) {
      return Caching.OFF;
    }
    EffectiveConfig config = configs.effective(caller.organization());
    if (!config.switchedOn(ConfigField.CACHE_ENABLED)) {
      return Caching.OFF;
    }
    String key = ResponseCache.key(model.card().id(), request, memories.get());
    ResponseCache.Entry hit = mode == CacheMode.REFRESH ? null : cache.get(caller.orgId(), key);
    metrics.cache(hit == null ? "miss" : "hit");
    return new Caching(key, hit, config.seconds(ConfigField.CACHE_TTL_SECONDS).toSeconds());
  }

  /** A request let in: its longest reply (max_tokens, or what the defaults allow), its permit. */
  private record Admission(long longestReply, InferenceLimits.Permit permit) {}

  /** The reply's room the context must keep: max_tokens, or one token when the caller left it out. */
  private static int reservedReply(Sampling sampling) {
    return sampling.maxTokens() == null ? 1 : sampling.maxTokens();
  }

  /**
   * The checks every generation passes before work starts, cheapest and permanent first: tokens
   * per request and context (400s), then the hourly budget, a concurrency slot and the budgets in
   * money, which hold the most the request may cost at its model's prices (429s).
   */
  private Admission admit(
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
    checkContext(promptTokens + reserved, model.card().contextLength());
    long longest = sampling.maxTokens() != null
        ? sampling.maxTokens()
        : defaultMaxTokens(org, model.card().contextLength(), promptTokens);
    InferenceLimits.Permit permit = limits.admit(
        caller,
        atDoor,
        new InferenceLimits.TokenDemand(promptTokens, reserved, longest, memoryTokens),
        new InferenceLimits.Spending(
            assistantId, model.pricing().costNanos(promptTokens + memoryTokens, longest)));
    return new Admission(longest, permit);
  }

  /** A generation and the usage it was charged. */
  public record Outcome(Generation generation, Generation.Usage usage) {}

  /**
   * Runs the prepared request on its engine, delivering to {@code sink}, and charges its usage
   * however it ends: in full when it finished; the prompt and what was delivered when it ended
   * after its output began or because the client left; nothing (no token, no cost) when it
   * failed before any output: a failure of the provider's is not the client's to pay.
   */
  public Outcome generate(Principal caller, Prepared prepared, TokenSink sink) {
    if (prepared.cache().hit() != null) {
      return replay(caller, prepared, sink);
    }
    String model = prepared.model().card().id();
    long started = System.nanoTime();
    Recording recording = new Recording(sink, model, started);
    Generation generation;
    admit(caller, prepared.model().engine(), model);
    metrics.started();
    try {
      generation = prepared.model().engine().generate(prepared.request(), recording);
    } catch (RuntimeException e) {
      boolean clientGone = e instanceof ClientGoneException;
      Generation.Usage used = recording.delivered.isEmpty() && !clientGone
          ? new Generation.Usage(0, 0)
          : new Generation.Usage(
              prepared.promptTokens(), TokenCounter.count(recording.delivered.toString()));
      record(caller, prepared, recording.deployment, used);
      String outcome = e instanceof EngineException failure
          ? failure.failure().code()
          : clientGone ? "client_gone" : "internal_error";
      long took = System.nanoTime() - started;
      metrics.generation(model, outcome, took);
      // A client that went away is not the service's failure: counted, timed, not an error.
      usage.finished(
          caller.orgId(), caller.credentialId(), model, recording.deployment, !clientGone, took);
      int status = e instanceof EngineException failure
          ? failure.toApiException().status()
          : clientGone ? CLIENT_CLOSED : 500;
      traced(caller, prepared, recording, used, null, null);
      if (!clientGone) {
        Traces.failed(Traces.request(), outcome, e.getMessage());
      }
      logRequest(caller, prepared, recording, started, used, status, outcome, null);
      throw e;
    } finally {
      metrics.ended();
    }
    long took = System.nanoTime() - started;
    metrics.generation(model, "completed", took);
    usage.finished(caller.orgId(), caller.credentialId(), model, recording.deployment, false, took);
    Outcome outcome =
        new Outcome(generation, finish(caller, prepared, recording.deployment, generation));
    keepInCache(
        caller,
        prepared,
        new Generation(
            generation.text(),
            generation.finishReason(),
            outcome.usage(),
            generation.toolCalls(),
            generation.choices()));
    traced(
        caller, prepared, recording, outcome.usage(), generation.finishReason(), generation.text());
    logRequest(caller, prepared, recording, started, outcome.usage(), 200, null, generation.text());
    return outcome;
  }

  private static RequestRecord.Who who(
      Principal caller, Origin origin, String id, ModelCatalog.Entry model) {
    return new RequestRecord.Who(
        id,
        caller.orgId(),
        origin.atMillis(),
        origin.route(),
        caller.credentialId(),
        origin.assistantId(),
        origin.agent(),
        origin.endUser(),
        model.card().id());
  }

  /**
   * Tells the request's span how it ended ({@code recording} null: from the cache), with its
   * messages and answer only where the organization let contents into its traces.
   */
  private void traced(
      Principal caller,
      Prepared prepared,
      Recording recording,
      Generation.Usage used,
      String finishReason,
      String answer) {
    if (!Traces.request().isRecording()) {
      return; // nothing to tell, and nothing allocated to tell it
    }
    GatewaySpans.ended(
        prepared,
        recording == null ? null : recording.deployment,
        recording == null ? 0 : recording.attempts,
        used,
        recording == null
            ? 0
            : prepared.model().pricing().costNanos(used.promptTokens(), used.completionTokens()),
        finishReason,
        () -> caller.organization() != null
            && configs.effective(caller.organization()).switchedOn(ConfigField.TRACES_CONTENTS),
        () -> sent(prepared),
        answer);
  }

  /** The status the log gives a request whose client left (nginx's, as proxies log it). */
  private static final int CLIENT_CLOSED = 499;

  /**
   * Keeps the request's record in the organization's request log (never waited for): a generation
   * ({@code recording} its engine call), or an answer from the cache ({@code recording} null).
   */
  private void logRequest(
      Principal caller,
      Prepared prepared,
      Recording recording,
      long engineStarted,
      Generation.Usage used,
      int status,
      String errorCode,
      String answer) {
    if (caller.organization() == null) {
      return;
    }
    Origin origin = prepared.origin();
    boolean contents =
        configs.effective(caller.organization()).switchedOn(ConfigField.REQUEST_LOG_CONTENTS);
    requests.add(new RequestRecord(
        who(caller, origin, origin.recordId(prepared.requestId()), prepared.model()),
        recording == null || recording.deployment.isEmpty() ? null : recording.deployment,
        recording == null ? 0 : recording.attempts,
        status,
        errorCode,
        (engineStarted - origin.startedNanos()) / 1_000_000,
        recording == null || recording.firstTokenNanos == 0
            ? null
            : (recording.firstTokenNanos - engineStarted) / 1_000_000,
        (System.nanoTime() - origin.startedNanos()) / 1_000_000,
        used.promptTokens(),
        used.completionTokens(),
        used.total() == 0 ? 0 : prepared.memoryTokens(),
        recording == null
            ? 0
            : prepared.model().pricing().costNanos(used.promptTokens(), used.completionTokens()),
        prepared.cache().status(),
        prepared.memory().scored(),
        contents ? sent(prepared) : null,
        contents ? answer : null));
  }

  /**
   * Serves a kept answer: the client gets its text (one piece, when it streams) and the usage it
   * had; the organization is charged nothing (no token, no cost), the hit is counted in its usage.
   */
  private Outcome replay(Principal caller, Prepared prepared, TokenSink sink) {
    ResponseCache.Entry hit = prepared.cache().hit();
    GatewaySpans.response();
    sink.begin();
    if (!hit.text().isEmpty()) {
      sink.text(hit.text());
    }
    usage.cacheHit(
        caller.orgId(), caller.credentialId(), prepared.model().card().id());
    Generation generation = new Generation(hit.text(), hit.finishReason(), hit.usage());
    keep(caller, prepared, generation, new Generation.Usage(0, 0));
    traced(caller, prepared, null, new Generation.Usage(0, 0), hit.finishReason(), hit.text());
    logRequest(
        caller,
        prepared,
        null,
        System.nanoTime(),
        new Generation.Usage(0, 0),
        200,
        null,
        hit.text());
    return new Outcome(generation, hit.usage());
  }

  /** Keeps a whole text answer (no tool call, one choice, ended or cut by length) when asked. */
  private void keepInCache(Principal caller, Prepared prepared, Generation generation) {
    Caching caching = prepared.cache();
    if (caching.key() == null
        || generation.text() == null
        || generation.toolCalls() != null
        || generation.choices() != null
        || !(Generation.STOP.equals(generation.finishReason())
            || Generation.LENGTH.equals(generation.finishReason()))) {
      return;
    }
    boolean kept = cache.put(caller.orgId(), caching.key(), generation, caching.ttlSeconds());
    metrics.cache(kept ? "stored" : "too_large");
  }

  /**
   * The client's sink, noting what reached the client (charged if the generation does not end)
   * and which deployment answered (the usage is recorded under it), and timing the first token.
   */
  private final class Recording extends ForwardingSink {
    private final String model;
    private final long started;
    final StringBuilder delivered = new StringBuilder();
    String deployment = "";
    int attempts = 1;
    long firstTokenNanos;

    Recording(TokenSink sink, String model, long started) {
      super(sink);
      this.model = model;
      this.started = started;
    }

    /** The response's span, from the answer's first byte to the client (null: not begun). */
    private Span response;

    @Override
    public void begin() {
      if (response == null) {
        response = GatewaySpans.response();
      }
      sink.begin();
    }

    @Override
    public void answeredBy(String answering, int attempts) {
      deployment = answering;
      this.attempts = attempts;
      sink.answeredBy(answering, attempts);
    }

    private void firstToken() {
      if (firstTokenNanos == 0) {
        firstTokenNanos = System.nanoTime();
        metrics.firstToken(model, firstTokenNanos - started);
        if (response != null) {
          response.addEvent("first_token");
        }
      }
    }

    @Override
    public void text(String piece) {
      firstToken();
      delivered.append(piece);
      sink.text(piece);
    }

    @Override
    public void toolCalls(com.fasterxml.jackson.databind.JsonNode deltas) {
      delivered.append(deltas); // counted as delivered output if the stream is cut
      sink.toolCalls(deltas);
    }

    @Override
    public void choice(com.fasterxml.jackson.databind.JsonNode choice) {
      firstToken();
      delivered.append(choice.path("delta").path("content").asText(""));
      sink.choice(choice);
    }
  }

  /**
   * An engine that calls out goes through the organization's outbound firewall first: a blocked
   * destination fails the request at once, naming the rule, before anything is sent.
   */
  private void admit(Principal caller, Engine engine, String model) {
    engine.origin().ifPresent(origin -> {
      try {
        egress.admit(caller.orgId(), origin);
      } catch (OutboundBlocked e) {
        metrics.generation(model, "outbound_blocked", 0);
        throw ApiException.forbidden("outbound_blocked", e.getMessage());
      }
    });
  }

  /**
   * Records the request's usage and returns it: the engine's own count when it gave one, else
   * the gateway's (cl100k_base over what was sent and received).
   */
  private Generation.Usage finish(
      Principal caller, Prepared prepared, String deployment, Generation generation) {
    Generation.Usage counted = generation.usage() != null
        ? generation.usage()
        : new Generation.Usage(prepared.promptTokens(), TokenCounter.count(generation.text()));
    record(caller, prepared, deployment, counted);
    keep(caller, prepared, generation, counted);
    memory.answered(caller, prepared.memory(), generation.text(), prepared.requestId());
    return counted;
  }

  /**
   * Keeps the exchange in the organization's conversation history (its default instance), unless
   * the organization turned CONVERSATION_HISTORY off: the client's messages (not the memory block
   * Engram added) or prompt, and the answer.
   */
  private void keep(
      Principal caller, Prepared prepared, Generation generation, Generation.Usage counted) {
    if (caller.organization() == null
        || !Boolean.parseBoolean(configs
            .effective(caller.organization())
            .variable("CONVERSATION_HISTORY")
            .orElse("true"))) {
      return;
    }
    String sent = sent(prepared);
    history.record(
        caller.organization(),
        new ConversationHistory.Answered(
            caller.credentialId(),
            prepared.origin().endUser(),
            prepared.requestId(),
            prepared.model().card().id(),
            sent,
            generation.text() == null ? "" : generation.text(),
            counted.promptTokens(),
            counted.completionTokens(),
            prepared.memoryTokens()));
  }

  /** The client's messages (not the memory block Engram added) or prompt, as JSON. */
  private static String sent(Prepared prepared) {
    GenerationRequest request = prepared.request();
    if (request.isChat()) {
      List<ChatMessage> messages = request.messages();
      return Json.write(
          prepared.memory().isEmpty() ? messages : messages.subList(1, messages.size()));
    }
    return Json.write(List.of(new ChatMessage(ChatMessage.USER, request.prompt())));
  }

  private void record(
      Principal caller, Prepared prepared, String deployment, Generation.Usage counted) {
    long cost =
        prepared.model().pricing().costNanos(counted.promptTokens(), counted.completionTokens());
    prepared.permit().charge(counted.total());
    prepared.permit().chargeCost(cost);
    metrics.tokens(prepared.model().card().id(), counted, prepared.memoryTokens());
    usage.record(
        caller.orgId(),
        caller.credentialId(),
        prepared.model().card().id(),
        deployment,
        counted,
        counted.total() == 0 ? 0 : prepared.memoryTokens(),
        cost);
  }

  /**
   * Fills in max_tokens when the caller left it out: the spec's 2048, within the plan, the context
   * and what the hour's token budget granted the request.
   */
  private Sampling resolve(
      Sampling sampling, Admission admission, int contextLength, int promptTokens) {
    if (sampling.maxTokens() != null) {
      return sampling;
    }
    long max = Math.min(admission.longestReply(), contextLength - promptTokens);
    max = Math.min(max, admission.permit().replyAllowance());
    return sampling.withMaxTokens((int) Math.max(1, max));
  }

  /** The longest reply of a request without max_tokens: the spec's 2048, within the plan and the context. */
  private long defaultMaxTokens(Organization org, int contextLength, int promptTokens) {
    long max = Math.min(Sampling.DEFAULT_MAX_TOKENS, limits.tokensPerRequest(org));
    return Math.max(1, Math.min(max, contextLength - promptTokens));
  }

  private static void checkContext(int tokens, int contextLength) {
    if (tokens > contextLength) {
      throw ApiException.invalid(
          "context_length_exceeded",
          "messages",
          "This model's context is " + contextLength + " tokens; the messages and max_tokens need "
              + tokens);
    }
  }

  static int chatTokens(List<ChatMessage> messages) {
    int tokens = TOKENS_FOR_REPLY;
    for (ChatMessage message : messages) {
      tokens += TOKENS_PER_MESSAGE
          + (message.content() == null ? 0 : TokenCounter.count(message.content()))
          + toolingTokens(message.tooling());
    }
    return tokens;
  }

  /**
   * A message's tool fields, counted as text; its content parts (their text is the message's) as
   * {@link #TOKENS_PER_IMAGE} an image: an image's bytes are not its tokens.
   */
  private static int toolingTokens(ObjectNode tooling) {
    if (tooling == null) {
      return 0;
    }
    JsonNode parts = tooling.get(ChatRequest.PARTS);
    if (parts == null) {
      return TokenCounter.count(tooling.toString());
    }
    int images = 0;
    for (JsonNode part : parts) {
      images += "image_url".equals(part.path("type").asText()) ? 1 : 0;
    }
    ObjectNode rest = tooling.deepCopy();
    rest.remove(ChatRequest.PARTS);
    return images * TOKENS_PER_IMAGE + (rest.isEmpty() ? 0 : TokenCounter.count(rest.toString()));
  }

  /** What OpenAI charges a low-detail image; a provider's own count replaces it in the usage. */
  static final int TOKENS_PER_IMAGE = 85;
}
