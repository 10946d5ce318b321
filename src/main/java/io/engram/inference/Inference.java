package io.engram.inference;

import io.engram.access.AccessModule;
import io.engram.actions.CapabilityExecutor;
import io.engram.budgets.SpendGate;
import io.engram.capabilities.AssistantService;
import io.engram.guardrails.Guardrails;
import io.engram.inference.call.InferenceMetrics;
import io.engram.inference.call.ModelCalls;
import io.engram.inference.call.ResponseCache;
import io.engram.inference.local.LocalCapacity;
import io.engram.inference.local.LocalEngine;
import io.engram.inference.local.LocalEngines;
import io.engram.inference.local.LocalModels;
import io.engram.inference.local.ModelDownloads;
import io.engram.inference.models.ModelCard;
import io.engram.inference.models.ModelCatalog;
import io.engram.inference.models.ModelRoutes;
import io.engram.inference.models.ModelUploads;
import io.engram.inference.routing.Router;
import io.engram.inference.routing.Routing;
import io.engram.inference.routing.RoutingRoutes;
import io.engram.inference.usage.BilledTokens;
import io.engram.inference.usage.InferenceLimits;
import io.engram.inference.usage.RequestLog;
import io.engram.inference.usage.RequestLogRoutes;
import io.engram.inference.usage.UsageLedger;
import io.engram.inference.usage.UsageRoutes;
import io.engram.instances.storage.ConversationHistory;
import io.engram.memory.Embedder;
import io.engram.memory.MemoryReads;
import io.engram.memory.erasure.ErasureModule;
import io.engram.organizations.OrganizationStore;
import io.engram.platform.cluster.Cluster;
import io.engram.platform.config.ConfigException;
import io.engram.platform.config.EngramConfig;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.engram.platform.module.Job;
import io.engram.platform.module.Module;
import io.engram.platform.net.Egress;
import io.engram.platform.ratelimit.ConcurrencySlots;
import io.engram.platform.ratelimit.RateLimiter;
import io.engram.platform.ratelimit.RateLimits;
import io.engram.settings.OrganizationConfigs;
import io.engram.store.Database;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.trace.Tracer;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The inference gateway, assembled from the configuration: the engines and their models, the
 * limits, the usage ledger, and the routes. {@code Engram} holds one and closes it on shutdown.
 */
public final class Inference implements Module {
  private static final Logger LOG = LoggerFactory.getLogger(Inference.class);

  /**
   * What the gateway's calls leave behind, kept here for the jobs that write and sweep it and the
   * routes that read it: the usage ledger, the request log, conversation history, the response
   * cache and the gateway's metrics.
   */
  private record Ledgers(
      UsageLedger usage,
      RequestLog requests,
      ConversationHistory history,
      ResponseCache cache,
      InferenceMetrics metrics) {}

  private final Routing routing;
  private final Gateway gateway;
  private final Ledgers ledgers;
  private final ModelUploads uploads;
  private final EmbeddingGateway embeddings;
  private final List<AutoCloseable> engines;
  /** Every open event stream's keep-alives, from one task on the stream timer. */
  private final KeepAlives keepAlives;

  private final EngramConfig.WebSocketSettings webSockets;
  private final OrganizationConfigs configs;
  private final ResponseStore responses;
  private final long started;
  private volatile Function<String, Optional<Duration>> requestLogMaxAge = org -> Optional.empty();
  private ChatSockets sockets;

  private Inference(
      Routing routing,
      Gateway gateway,
      Ledgers ledgers,
      ModelUploads uploads,
      EmbeddingGateway embeddings,
      List<AutoCloseable> engines,
      Duration keepAlive,
      EngramConfig.WebSocketSettings webSockets,
      OrganizationConfigs configs,
      ResponseStore responses,
      long started) {
    this.routing = routing;
    this.gateway = gateway;
    this.ledgers = ledgers;
    this.uploads = uploads;
    this.embeddings = embeddings;
    this.engines = engines;
    this.webSockets = webSockets;
    this.configs = configs;
    this.responses = responses;
    this.started = started;
    this.keepAlives = new KeepAlives(keepAlive);
  }

  /**
   * MODEL_AUTO_DOWNLOAD: the server's DEFAULT_MODEL, when it names a Hugging Face repository that
   * no upstream, provider model or local directory serves, fetched before the server starts (a
   * failure stops the start with its reason). Nothing when it is served already or the operator
   * turned downloads off (then said in the log).
   */
  private static java.util.Optional<LocalModels.Found> downloadDefaultModel(
      EngramConfig config, ModelCatalog catalog) {
    String id = config.inference().defaultModel();
    if (config.inference().upstream().isPresent()
        || !ModelDownloads.isRepository(id)
        || catalog.find(id).isPresent()) {
      return java.util.Optional.empty();
    }
    EngramConfig.LocalEngineSettings local = config.inference().local();
    if (!local.autoDownload()) {
      LOG.warn(
          "inference: DEFAULT_MODEL '{}' is not served: it is not in {} and "
              + "MODEL_AUTO_DOWNLOAD=false (put its files in {}/{})",
          id,
          config.inference().modelCacheDir(),
          config.inference().modelCacheDir(),
          id);
      return java.util.Optional.empty();
    }
    LOG.info("inference: downloading DEFAULT_MODEL '{}' from {}", id, local.hubEndpoint());
    java.util.OptionalLong limit = config.inference().maxModelSizeGb().isPresent()
        ? java.util.OptionalLong.of(config.inference().maxModelSizeGb().getAsInt() * 1_000_000_000L)
        : java.util.OptionalLong.empty();
    try {
      return java.util.Optional.of(new ModelDownloads(local.hubEndpoint(), local.hubToken(), limit)
          .fetch(id, config.inference().modelCacheDir()));
    } catch (ModelDownloads.DownloadFailed e) {
      throw new ConfigException(List.of(e.getMessage()
          + " (MODEL_AUTO_DOWNLOAD=true; set it to false to start without this model)"));
    }
  }

  public static Inference open(
      EngramConfig config,
      Database database,
      MemoryReads memory,
      ErasureModule erasures,
      Embedder embedder,
      MeterRegistry registry,
      OrganizationConfigs configs,
      ConversationHistory history,
      Egress egress,
      Cluster cluster,
      RateLimiter windows,
      io.engram.platform.crypto.SecretBox secrets,
      SpendGate spend,
      Guardrails guardrails,
      Clock clock) {
    ConcurrencySlots slots = RateLimits.slots(cluster, config.cluster().slotLease());
    long started = clock.instant().getEpochSecond();
    ModelCatalog catalog = new ModelCatalog(config.inference().defaultModel());
    List<AutoCloseable> engines = new ArrayList<>();
    long queueTimeout =
        Duration.ofSeconds(config.server().requestTimeoutSeconds()).toMillis();
    LocalCapacity capacity = LocalEngines.capacity(config.inference(), registry);
    Function<Path, LocalEngine> localEngine =
        directory -> new LocalEngine(directory, capacity, queueTimeout);
    java.util.function.Consumer<LocalModels.Found> serveLocally = found -> {
      LocalEngine local = localEngine.apply(found.directory());
      engines.add(local);
      catalog.add(new ModelCatalog.Entry(
          new ModelCard(
              found.id(),
              found.createdEpochSeconds(),
              "engram",
              local.servableContext(found),
              found.parametersLabel()),
          local,
          found.id()));
      LOG.info(
          "inference: model '{}' ({} parameters) served in-process from {}",
          found.id(),
          found.parametersLabel(),
          found.directory());
    };
    LocalModels.scan(config.inference().modelCacheDir()).forEach(serveLocally);
    Router.Configured configured = config
        .inference()
        .upstream()
        .map(upstream -> {
          String id = !config.inference().defaultModel().isEmpty()
              ? config.inference().defaultModel()
              : upstream.model();
          if (id.isEmpty()) {
            throw new ConfigException(
                List.of("ENGRAM_UPSTREAM_URL is set: set DEFAULT_MODEL (the id clients use) or "
                    + "ENGRAM_UPSTREAM_MODEL (the upstream's model name) too"));
          }
          LOG.info(
              "inference: model '{}' served by the upstream at {} (the server's provider '{}')",
              id,
              upstream.baseUrl(),
              Routing.CONFIGURED);
          return Routing.configured(
              upstream.baseUrl(),
              upstream.apiKey(),
              upstream.model(),
              id,
              upstream.contextLength(),
              started * 1000);
        })
        .orElse(Router.Configured.NONE);
    Routing routing = Routing.open(
        database,
        secrets,
        registry,
        egress,
        cluster.bus(),
        Duration.ofSeconds(config.server().requestTimeoutSeconds()),
        configured,
        clock);
    catalog.routeThrough(routing.router());
    catalog.embedThrough(routing.router()::embedding);
    engines.add(routing.router());
    downloadDefaultModel(config, catalog).ifPresent(serveLocally);
    if (catalog.all().isEmpty()) {
      LOG.info(
          "inference: no generation model configured (set ENGRAM_UPSTREAM_URL, add a provider and "
              + "a model at /v1/admin/providers and /v1/admin/models, or put a model in {})",
          config.inference().modelCacheDir());
    }
    ModelUploads uploads = new ModelUploads(
        config.inference().modelCacheDir(),
        localEngine,
        id -> catalog.find(id).isPresent() || id.equals(EmbeddingRoutes.MODEL_ID));
    catalog.serveOrganizationModels(uploads);
    engines.add(uploads);
    UsageLedger usage = UsageLedger.open(database, clock);
    RequestLog requests = new RequestLog(database, secrets, registry, clock);
    ResponseStore responses = new ResponseStore(database);
    ResponseCache cache = new ResponseCache(config.responseCacheBytes(), clock, registry);
    // An erasure reaches the gateway's stores; with Redis every node drops the organization's
    // cached answers (without it, the others' can never be served again: their key holds the
    // erased memory).
    InferenceErasure erasure = new InferenceErasure(responses, cache, requests);
    if (cluster.redis().isPresent()) {
      erasure.dropCachesWith(cluster.keep(new io.engram.platform.cluster.ChangeSignal(
          cluster.bus(), "engram:response-cache-drops", erasure::dropCache)));
    }
    erasures.include(erasure);
    InferenceLimits limits = InferenceLimits.open(usage, configs, slots, windows, cluster, spend);
    InferenceMetrics metrics = new InferenceMetrics(registry);
    // What a model charges for inputs is learned from every call's answer and reserved at by both.
    BilledTokens billed = new BilledTokens();
    ModelCalls calls = new ModelCalls(
        memory, cache, requests, usage, history, egress, metrics, billed, guardrails);
    return new Inference(
        routing,
        new Gateway(catalog, limits, configs, calls, billed),
        new Ledgers(usage, requests, history, cache, metrics),
        uploads,
        new EmbeddingGateway(catalog, limits, configs, embedder, calls, billed),
        engines,
        Duration.ofSeconds(config.inference().streamKeepAliveSeconds()),
        config.inference().webSockets(),
        configs,
        responses,
        started);
  }

  /** What conversations as an assistant need: the assistants, who carries out their calls. */
  public record Assistants(AssistantService service, CapabilityExecutor executor, int maxSteps) {}

  private List<RouteModule> routes = List.of();
  private OrganizationStore organizations;
  private Clock clock;

  /**
   * The routes, whose model-running ones take their slots at this gateway's door; assistants'
   * chats call their capabilities through {@code assistants}.
   */
  public Inference serving(
      AccessModule access,
      OrganizationStore organizations,
      Assistants assistants,
      long maxBodyBytes,
      Tracer tracer,
      Clock clock) {
    access.admitInferenceThrough(gateway.limits());
    this.organizations = organizations;
    this.clock = clock;
    routes = routes(access, organizations, assistants, maxBodyBytes, tracer, clock);
    return this;
  }

  @Override
  public String name() {
    return "inference";
  }

  @Override
  public void register(Routes table) {
    routes.forEach(module -> module.register(table));
  }

  /**
   * Requests never wait on usage writes: they are batched and written every second (read back by
   * the hourly limit); stored responses past their retention are deleted hourly.
   */
  @Override
  public List<Job> jobs() {
    return List.of(
        Job.every(
            Duration.ofSeconds(1), "write inference usage and the request log", this::flushUsage),
        Job.every(
            Duration.ofSeconds(1), "follow providers and models changed", routing::followChanges),
        new Job(
            "purge requests past their retention (plan or policy)",
            Duration.ofMinutes(1),
            Duration.ofHours(1),
            () -> ledgers.requests().purge(id -> organizations.find(id), requestLogMaxAge)),
        Job.every(
            Duration.ofMinutes(1), "drop cached answers past their time", ledgers.cache()::sweep),
        new Job(
            "purge stored responses past their retention",
            Duration.ofMinutes(1),
            Duration.ofHours(1),
            () -> purgeOldResponses(clock.instant())),
        keepAlives.job(),
        sockets.authDeadlines());
  }

  private List<RouteModule> routes(
      AccessModule access,
      OrganizationStore organizations,
      Assistants assistants,
      long maxBodyBytes,
      Tracer tracer,
      Clock clock) {
    sockets = new ChatSockets(
        gateway, access.sockets(), webSockets, configs, gateway.limits().slots(), tracer);
    return List.of(
        new GenerationRoutes(gateway, maxBodyBytes, keepAlives),
        new AssistantChatRoutes(
            gateway,
            assistants.service(),
            assistants.executor(),
            keepAlives,
            clock,
            maxBodyBytes,
            assistants.maxSteps()),
        new ResponsesRoutes(gateway, responses, maxBodyBytes, keepAlives, clock),
        new MessagesRoutes(gateway, maxBodyBytes, keepAlives, clock),
        new ModelRoutes(
            gateway.catalog(),
            List.of(EmbeddingRoutes.card(started)),
            uploads,
            org -> configs
                .effective(org)
                .variable("MAX_MODEL_SIZE_GB")
                .map(gb -> OptionalInt.of(Integer.parseInt(gb)))
                .orElse(OptionalInt.empty())),
        new EmbeddingRoutes(embeddings, maxBodyBytes),
        new RoutingRoutes(routing, maxBodyBytes),
        new UsageRoutes(ledgers.usage(), gateway.limits(), access.windows(), organizations, clock),
        new RequestLogRoutes(ledgers.requests(), organizations),
        sockets);
  }

  /** Bytes the organization stores in its uploaded models (part of its storage usage). */
  public java.util.OptionalLong storedBytes(String orgId) {
    return java.util.OptionalLong.of(uploads.bytesUsed(orgId));
  }

  /** What an organization holds open on this node now: inference requests and WebSockets. */
  public Map<String, Integer> inUse(String orgId) {
    return Map.of(
        "inference_requests",
        gateway.limits().inFlight(orgId),
        "websocket_connections",
        sockets == null ? 0 : sockets.openConnections(orgId));
  }

  /** Generations running on an engine on this node now. */
  public int generationsInFlight() {
    return ledgers.metrics().inFlight();
  }

  /** Every model the gateway serves, by id (for fine-tuning: the base models). */
  public io.engram.inference.models.ModelCatalog catalog() {
    return gateway.catalog();
  }

  /**
   * Keeps an organization's request log no longer than {@code maxAge} says (its retention
   * policies for conversations), where that is shorter than its plan's retention.
   */
  public Inference shortenRequestLogBy(Function<String, Optional<Duration>> maxAge) {
    this.requestLogMaxAge = maxAge;
    return this;
  }

  /** Reports providers that refuse the gateway's key or a deployment's model through {@code alerts}. */
  public Inference alertProvidersThrough(io.engram.inference.routing.ProviderAlerts alerts) {
    routing.alertThrough(alerts);
    return this;
  }

  /** Organizations' own models (uploads and fine-tuned models). */
  public ModelUploads uploads() {
    return uploads;
  }

  public Gateway gateway() {
    return gateway;
  }

  /** Stored responses are kept 30 days, as OpenAI keeps them; older ones are deleted. */
  public static final Duration RESPONSE_RETENTION = Duration.ofDays(30);

  public void purgeOldResponses(java.time.Instant now) {
    responses.purgeBefore(now.minus(RESPONSE_RETENTION));
  }

  /** Writes queued usage and conversation history (every second, and at shutdown). */
  public void flushUsage() {
    ledgers.usage().flush();
    ledgers.history().flush();
    ledgers.requests().flush();
  }

  @Override
  public void close() {
    flushUsage();
    for (AutoCloseable engine : engines) {
      try {
        engine.close();
      } catch (Exception e) {
        LOG.warn("could not close an engine: {}", e.toString());
      }
    }
  }
}
