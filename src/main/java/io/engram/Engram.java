package io.engram;

import io.engram.access.CredentialService;
import io.engram.access.CredentialStore;
import io.engram.access.Guard;
import io.engram.access.SessionRoutes;
import io.engram.access.SessionService;
import io.engram.access.SessionStore;
import io.engram.actions.ActionBridges;
import io.engram.actions.ActionRoutes;
import io.engram.actions.CapabilityExecutor;
import io.engram.actions.Executions;
import io.engram.actions.MemoryHandlers;
import io.engram.actions.Reminders;
import io.engram.administration.ConfigRoutes;
import io.engram.administration.EnvRoutes;
import io.engram.administration.OrganizationRoutes;
import io.engram.administration.OrganizationService;
import io.engram.alerts.AlertChannels;
import io.engram.alerts.AlertEvaluator;
import io.engram.alerts.AlertKind;
import io.engram.alerts.AlertNotifier;
import io.engram.alerts.AlertRoutes;
import io.engram.alerts.AlertRules;
import io.engram.alerts.AlertStore;
import io.engram.alerts.WebhookSender;
import io.engram.capabilities.AssistantRoutes;
import io.engram.capabilities.AssistantService;
import io.engram.capabilities.AssistantStore;
import io.engram.capabilities.CapabilityHandler;
import io.engram.capabilities.CapabilityRegistry;
import io.engram.capabilities.CapabilityRoutes;
import io.engram.capabilities.OrganizationAnalytics;
import io.engram.console.ConsoleFilter;
import io.engram.finetuning.FineTuning;
import io.engram.finetuning.FineTuningRoutes;
import io.engram.finetuning.trainer.TorchRuntime;
import io.engram.inference.Inference;
import io.engram.instances.InstanceServices;
import io.engram.instances.Snapshots;
import io.engram.memory.Embedder;
import io.engram.memory.McpRoutes;
import io.engram.memory.MemoryIndex;
import io.engram.memory.MemoryRoutes;
import io.engram.memory.MemoryService;
import io.engram.memory.MemorySettingsRoutes;
import io.engram.memory.MemoryStores;
import io.engram.network.ManualProvisioner;
import io.engram.network.Network;
import io.engram.operations.OperationsRoutes;
import io.engram.organizations.AuditLog;
import io.engram.organizations.OrganizationStore;
import io.engram.organizations.UserStore;
import io.engram.platform.cluster.ChangeSignal;
import io.engram.platform.cluster.Cluster;
import io.engram.platform.config.ConfigException;
import io.engram.platform.config.EngramConfig;
import io.engram.platform.crypto.SecretBox;
import io.engram.platform.http.ConnectionOwners;
import io.engram.platform.http.HttpServer;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.engram.platform.io.VolumeMeter;
import io.engram.platform.logging.OrganizationLogLevels;
import io.engram.platform.metrics.HttpMetrics;
import io.engram.platform.net.ClientAddress;
import io.engram.platform.ratelimit.RateLimiter;
import io.engram.platform.ratelimit.RateLimits;
import io.engram.reflection.ReflectionReport;
import io.engram.reflection.ReflectionRoutes;
import io.engram.reflection.ReflectionService;
import io.engram.settings.OrganizationConfigs;
import io.engram.settings.SystemDefaults;
import io.engram.store.Database;
import io.engram.store.Databases;
import io.engram.store.SecretKeys;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The whole service, wired explicitly: configuration -> database -> stores -> services -> routes.
 * {@link Main} starts one for {@code serve}; tests start one on port 0.
 */
public final class Engram implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Engram.class);
  /** How often a node looks for organizations whose reflection run is due. */
  static final Duration REFLECTION_TICK = Duration.ofSeconds(30);

  /** The stores and services both the server and the admin CLI use. */
  public record Services(
      Database database,
      OrganizationStore organizations,
      UserStore users,
      CredentialService credentials,
      SessionService sessions,
      OrganizationService organizationService,
      AssistantService assistants,
      OrganizationConfigs configs,
      AuditLog audit,
      SecretBox secrets,
      MemoryHandlers memoryHandlers,
      Reminders reminders,
      Cluster cluster)
      implements AutoCloseable {

    public static Services open(EngramConfig config, Clock clock) {
      Database database = Databases.open(config);
      OrganizationStore organizations = new OrganizationStore(database);
      UserStore users = new UserStore(database);
      Cluster cluster = Cluster.open(config.values().get("REDIS_URL"));
      CredentialService credentials = new CredentialService(
          new CredentialStore(database),
          organizations,
          clock,
          config.access().adminKey(),
          cluster.bus());
      SessionService sessions = new SessionService(
          new SessionStore(database),
          users,
          organizations,
          clock,
          Duration.ofMinutes(config.access().sessionTtlMinutes()));
      OrganizationService administration =
          new OrganizationService(organizations, users, credentials, clock);
      MemoryHandlers memoryHandlers = new MemoryHandlers();
      Reminders reminders = new Reminders(database, clock);
      List<CapabilityHandler> handlers = new ArrayList<>(memoryHandlers.handlers());
      handlers.addAll(reminders.handlers());
      handlers.add(new OrganizationAnalytics(database));
      AssistantService assistants = new AssistantService(
          new AssistantStore(database), users, CapabilityRegistry.load(handlers), clock);
      // A lower plan allows fewer capabilities: each assistant is fitted to it, in its history.
      administration.onPlanChange((before, after, requestId) ->
          Map.of("assistants_changed", assistants.fitToPlan(after, requestId)));
      SecretBox secrets = SecretKeys.open(config.storage(), database);
      return new Services(
          database,
          organizations,
          users,
          credentials,
          sessions,
          administration,
          assistants,
          new OrganizationConfigs(database, SystemDefaults.of(config), secrets, clock),
          new AuditLog(database),
          secrets,
          memoryHandlers,
          reminders,
          cluster);
    }

    @Override
    public void close() {
      cluster.close();
      database.close();
    }
  }

  private final Services services;

  /**
   * With Redis, a node that writes a memory or changes an organization's settings tells the
   * others, which follow at once (milliseconds) instead of at their next one-second poll.
   */
  private static void followOtherNodesAtOnce(Services services, MemoryService memory) {
    Cluster cluster = services.cluster();
    if (cluster.redis().isEmpty()) {
      return;
    }
    // At most 20 catch-ups a second: each refreshes the index's searcher, which costs more than a
    // write when writes come by the dozen (measured: docs/benchmarks.md, "Three nodes").
    ChangeSignal memoryChanges = cluster.keep(new ChangeSignal(
        cluster.bus(),
        "engram:memory-changes",
        subject -> memory.index().followNew(),
        Duration.ofMillis(50)));
    memory.index().announceChangesWith(() -> memoryChanges.announce("memory"));
    ChangeSignal settingsChanges = cluster.keep(
        new ChangeSignal(cluster.bus(), "engram:settings-changes", services.configs()::forget));
    services.configs().announceChangesWith(settingsChanges::announce);
  }

  private final MemoryService memory;
  private final Runnable storageHousekeeping;
  private final ReflectionService reflection;
  private final Inference inference;
  private final HttpMetrics metrics;
  private final HttpServer server;
  private final ScheduledExecutorService housekeeping;

  private final AutoCloseable storageJobs;
  private final Network network;

  private Engram(
      Services services,
      MemoryService memory,
      ReflectionService reflection,
      Inference inference,
      HttpMetrics metrics,
      HttpServer server,
      boolean reflectionScheduler,
      AlertEvaluator alertEvaluator,
      Runnable dueReminders,
      Runnable storageHousekeeping,
      AutoCloseable storageJobs,
      Duration alertInterval,
      Network network) {
    this.network = network;
    this.services = services;
    this.storageJobs = storageJobs;
    this.memory = memory;
    this.reflection = reflection;
    this.inference = inference;
    this.metrics = metrics;
    this.server = server;
    this.housekeeping = Executors.newSingleThreadScheduledExecutor(
        Thread.ofVirtual().name("housekeeping").factory());
    // Ended sessions can never authenticate again; deleting them keeps the table small.
    housekeeping.scheduleWithFixedDelay(
        () -> quietly("purge ended sessions", services.sessions()::purgeEnded),
        0,
        1,
        TimeUnit.HOURS);
    housekeeping.scheduleWithFixedDelay(
        () -> quietly(
            "purge stored responses past their retention",
            () -> inference.purgeOldResponses(java.time.Instant.now())),
        1,
        60,
        TimeUnit.MINUTES);
    housekeeping.scheduleWithFixedDelay(
        () -> quietly("purge expired idempotency keys", memory::purgeExpiredIdempotencyKeys),
        1,
        60,
        TimeUnit.MINUTES);
    // The index is derived data: committing every few seconds bounds what a restart replays.
    // Requests never wait on usage writes: they are batched here, and read back by the hourly
    // limit.
    housekeeping.scheduleWithFixedDelay(
        () -> quietly("write inference usage", inference::flushUsage), 1, 1, TimeUnit.SECONDS);
    housekeeping.scheduleWithFixedDelay(
        () -> quietly("commit the memory index", memory.index()::commitIfChanged),
        5,
        5,
        TimeUnit.SECONDS);
    if (services.database().kind() == Database.Kind.POSTGRESQL) {
      followOtherNodesAtOnce(services, memory);
      // Other nodes change organizations' configuration too: in force here within about a second.
      housekeeping.scheduleWithFixedDelay(
          () -> quietly("follow configuration changes", services.configs()::followChanges),
          1,
          1,
          TimeUnit.SECONDS);
      // Other nodes write to the same database: follow their changes through the change log.
      housekeeping.scheduleWithFixedDelay(
          () -> quietly("follow the memory change log", memory.index()::tail),
          1,
          1,
          TimeUnit.SECONDS);
    }
    housekeeping.scheduleWithFixedDelay(
        () -> quietly("evaluate alerts", alertEvaluator::tick),
        alertInterval.toMillis(),
        alertInterval.toMillis(),
        TimeUnit.MILLISECONDS);
    // Reminders fall due like alerts fire: checked as often, and delivered on the same webhooks.
    housekeeping.scheduleWithFixedDelay(
        () -> quietly("deliver due reminders", dueReminders),
        alertInterval.toMillis(),
        alertInterval.toMillis(),
        TimeUnit.MILLISECONDS);
    this.storageHousekeeping = storageHousekeeping;
    // Storage bought beyond the plan is charged per day (hourly keeps each day's line current),
    // and retention policies are applied.
    housekeeping.scheduleWithFixedDelay(
        () -> quietly("storage charges and retention", storageHousekeeping),
        1,
        60,
        TimeUnit.MINUTES);
    if (reflectionScheduler) {
      // Each organization's interval is counted from its last run in the database, so the
      // schedule survives restarts, and the lease keeps nodes from running one organization twice.
      housekeeping.scheduleWithFixedDelay(
          () -> quietly("start scheduled reflection runs", reflection::tick),
          REFLECTION_TICK.toSeconds(),
          REFLECTION_TICK.toSeconds(),
          TimeUnit.SECONDS);
    }
  }

  /** Runs a housekeeping task; a failure is logged and the schedule goes on. */
  private static void quietly(String task, Runnable work) {
    try {
      work.run();
    } catch (RuntimeException e) {
      LOG.warn("could not {}: {}", task, e.toString());
    }
  }

  /**
   * Starts the service. When no account key exists and none is configured, one is created first
   * and handed to {@code onFirstAccountKey} before the server listens, so it is shown before
   * anyone could need it.
   */
  public static Engram start(EngramConfig config, Clock clock, Consumer<String> onFirstAccountKey) {
    return start(config, clock, List.of(), onFirstAccountKey);
  }

  /** Starts the service; {@code extraModules} lets tests mount probe routes behind the real guards. */
  public static Engram start(
      EngramConfig config, Clock clock, List<Function<Guard, RouteModule>> extraModules) {
    return start(config, clock, extraModules, key -> {});
  }

  private static Engram start(
      EngramConfig config,
      Clock clock,
      List<Function<Guard, RouteModule>> extraModules,
      Consumer<String> onFirstAccountKey) {
    Services services = Services.open(config, clock);
    OrganizationLogLevels.install();
    MemoryService memory = null;
    ReflectionService reflection = null;
    Inference inference = null;
    Network network = null;
    AlertEvaluator alertEvaluator;
    try {
      memory = openMemory(config, services, clock);
      reflection = new ReflectionService(services.database(), memory.maintenance(), clock);
      HttpMetrics metrics = new HttpMetrics(clock);
      services.cluster().registerMetrics(metrics.registry());
      Embedder.shared(config.inference().modelCacheDir()).registerMetrics(metrics.registry());
      network = openNetwork(config, services, metrics, clock);
      services.organizationService().onPlanChange(network::planChanged);
      InstanceServices storage = InstanceServices.open(
          services.database(),
          services.secrets(),
          config.storage(),
          config.storage().dataDir().resolve("index").resolve("memory"),
          metrics.registry(),
          network.egress(),
          clock);
      // A restore over live data puts memories back: the index follows, and a restore a stop
      // cut short is finished before the server takes requests.
      MemoryIndex index = memory.index();
      MemoryService memories = memory;
      storage.snapshots().onRowsRestored(new Snapshots.RowsRestored() {
        @Override
        public void settle() {
          memories.flushUses();
        }

        @Override
        public void restored(String orgId, java.util.Set<String> ids) {
          index.syncAll(orgId, ids);
          index.refresh();
        }
      });
      int resumed = storage.snapshots().resumeInterrupted(services.organizationService()::get);
      if (resumed > 0) {
        LOG.info("finished {} restores a stop had interrupted", resumed);
      }
      RateLimiter windows = RateLimits.open(services.cluster(), clock);
      inference = Inference.open(
          config,
          services.database(),
          memory,
          Embedder.shared(config.inference().modelCacheDir()),
          metrics.registry(),
          services.configs(),
          storage.history(),
          network.egress(),
          services.cluster(),
          windows,
          clock);
      services.credentials().bootstrapAccountKey().ifPresent(onFirstAccountKey);
      ConnectionOwners connections = new ConnectionOwners();
      Guard guard = new Guard(
          services.credentials(),
          services.sessions(),
          windows,
          metrics,
          config.access().apiKeyRequired(),
          config.access().rateLimitRequests(),
          services.configs(),
          connections,
          trustedProxies(config),
          network.state(),
          inference.gateway().limits());
      List<RouteModule> modules = new ArrayList<>(List.of(
          routes -> routes.filter(new ConsoleFilter(Engram.class.getClassLoader())),
          new OperationsRoutes(services.database(), services.cluster(), metrics, guard),
          new OrganizationRoutes(
              services.organizationService(), guard, config.server().maxBodyBytes()),
          new SessionRoutes(
              services.sessions(),
              guard,
              config.server().maxBodyBytes(),
              config.access().cookieSecure(),
              Duration.ofMinutes(config.access().sessionTtlMinutes())),
          new AssistantRoutes(services.assistants(), guard, config.server().maxBodyBytes()),
          new CapabilityRoutes(services.assistants(), guard, config.server().maxBodyBytes()),
          new MemoryRoutes(
              memory, reflection::provenance, guard, config.server().maxBodyBytes(), clock),
          new MemorySettingsRoutes(memory, guard, config.server().maxBodyBytes()),
          new McpRoutes(
              memory, guard, config.server().maxBodyBytes(), config.server().corsOrigins(), clock),
          new ReflectionRoutes(
              reflection,
              new ReflectionReport(reflection, memory.maintenance(), clock),
              guard,
              config.server().maxBodyBytes())));
      services.memoryHandlers().bind(memory);
      ActionBridges bridges = new ActionBridges(services.database(), services.secrets(), clock);
      CapabilityExecutor executor = new CapabilityExecutor(
          services.assistants().registry(),
          bridges,
          new Executions(services.database()),
          services.database(),
          metrics.registry(),
          network.egress(),
          clock);
      modules.add(new ActionRoutes(
          bridges,
          executor,
          services.assistants(),
          services.organizationService(),
          guard,
          config.server().maxBodyBytes()));
      modules.addAll(inference.routes(
          guard,
          services.organizations(),
          new Inference.Assistants(
              services.assistants(), executor, config.inference().assistantMaxToolSteps()),
          config.server().maxBodyBytes(),
          clock));
      Inference running = inference;
      modules.add(new EnvRoutes(
          services.configs(),
          services.organizationService(),
          guard,
          config.server().maxBodyBytes()));
      modules.addAll(storage.routes(
          guard,
          services.configs(),
          services.organizationService(),
          config.server().maxBodyBytes()));
      modules.add(new ConfigRoutes(
          services.configs(),
          services.organizationService(),
          services.audit(),
          guard,
          orgId -> {
            Map<String, Integer> inUse = new LinkedHashMap<>();
            inUse.put("connections", connections.open(orgId));
            inUse.putAll(running.inUse(orgId));
            return inUse;
          },
          config.server().maxBodyBytes()));
      AlertStore alertStore = new AlertStore(services.database());
      AlertChannels channels = new AlertChannels(services.database(), services.secrets(), clock);
      WebhookSender webhooks =
          new WebhookSender(channels, clock, config.monitoring().webhookRetry(), network.egress());
      alertEvaluator = new AlertEvaluator(
          services.organizations(),
          services.configs(),
          connections,
          metrics.traffic(),
          // Everything the organization keeps counts against its allowance: models, instance
          // files, conversation history and memory vectors.
          org -> new AlertRules.Storage(
              running.storedBytes(org.id()).orElse(0) + storage.usage().kept(org.id()),
              storage.usage().limits(org).bytes()),
          // The iops alert: the block device under the instances' files, as the kernel counts it.
          VolumeMeter.of(config.storage().instancesDir())
              .<Supplier<Optional<VolumeMeter.Load>>>map(meter -> meter::sample)
              .orElse(Optional::empty),
          alertStore,
          new AlertNotifier(channels, webhooks, clock),
          metrics.registry(),
          clock);
      AlertEvaluator evaluator = alertEvaluator;
      // Retention that could not export kept what it would have deleted: the violation alert.
      storage
          .retention()
          .onViolations((org, kept) -> evaluator.report(
              org.id(),
              AlertKind.RETENTION_VIOLATION,
              !kept.isEmpty(),
              kept.size(),
              kept.isEmpty()
                  ? "Retention ran with every export and archive written"
                  : kept.size() + " items were kept because their export failed; first: "
                      + kept.get(0).item() + " (" + kept.get(0).failure() + ")"));
      modules.add(new AlertRoutes(
          alertStore,
          channels,
          webhooks,
          services.organizationService(),
          guard,
          clock,
          config.server().maxBodyBytes()));
      FineTuning fineTuning = new FineTuning(
          services.database(),
          storage,
          inference.catalog(),
          inference.uploads(),
          services.configs(),
          services.organizationService()::get,
          metrics.registry(),
          clock,
          new FineTuning.Options(
              Integer.parseInt(config.values().get("ENGRAM_FINE_TUNING_JOBS_PER_NODE")),
              Duration.ofSeconds(
                  Long.parseLong(config.values().get("ENGRAM_FINE_TUNING_LEASE_SECONDS"))),
              config.values().get("ENGRAM_TORCH_CACHE_DIR").isEmpty()
                  ? TorchRuntime.defaultCacheDir()
                  : Path.of(config.values().get("ENGRAM_TORCH_CACHE_DIR")),
              config
                  .inference()
                  .upstream()
                  .filter(upstream ->
                      Boolean.parseBoolean(config.values().get("ENGRAM_FINE_TUNING_UPSTREAM"))),
              Duration.ofMillis(
                  Long.parseLong(config.values().get("ENGRAM_FINE_TUNING_UPSTREAM_POLL_MILLIS"))),
              Duration.ofSeconds(config.server().requestTimeoutSeconds()),
              network.egress()));
      modules.add(new FineTuningRoutes(fineTuning, guard, config.server().maxBodyBytes()));
      extraModules.forEach(factory -> modules.add(factory.apply(guard)));
      modules.addAll(network.routes(
          guard,
          services.organizationService(),
          services.configs(),
          config.server().maxBodyBytes()));
      network.onCertificateExpiry((orgId, expiring, days, message) ->
          evaluator.report(orgId, AlertKind.CERTIFICATE_EXPIRING, expiring, days, message));
      Network tlsSource = network;
      HttpServer server = new HttpServer(
              config,
              metrics,
              modules,
              tlsSource
                  .tls()
                  .map(listener -> (jetty, http) -> listener.connector(
                      jetty, http, config.server().host(), integer(config, "API_TLS_PORT"))))
          .start();
      network.start();
      return new Engram(
          services,
          memory,
          reflection,
          inference,
          metrics,
          server,
          config.reflectionScheduler(),
          alertEvaluator,
          () -> services.reminders().deliverDue(channels, webhooks),
          () -> storage.hourly(
              services.organizationService(),
              (org, backup) -> evaluator.report(
                  org.id(),
                  AlertKind.BACKUP_FAILED,
                  !backup.status().equals("complete"),
                  backup.status().equals("complete") ? 0 : 1,
                  backup.status().equals("complete")
                      ? "The automatic backup " + backup.id() + " is complete"
                      : "The automatic backup of instance " + backup.instanceId() + " failed: "
                          + backup.error())),
          background(
              storage.startJobs(
                  services.organizationService()::get, !config.storage().usesPostgres()),
              fineTuning,
              network,
              !config.storage().usesPostgres()),
          config.monitoring().alertInterval(),
          network);
    } catch (RuntimeException e) {
      if (network != null) {
        network.close();
      }
      if (inference != null) {
        inference.close();
      }
      if (reflection != null) {
        reflection.close();
      }
      if (memory != null) {
        memory.close();
      }
      services.close();
      throw e;
    }
  }

  /** The node's background job runners, started together and stopped together. */
  private static AutoCloseable background(
      AutoCloseable storageJobs, FineTuning fineTuning, Network network, boolean soleNode) {
    fineTuning.start(soleNode);
    return () -> {
      fineTuning.close();
      storageJobs.close();
      network.close();
    };
  }

  /** The organizations' network boundary, before anything that calls out is built. */
  private static Network openNetwork(
      EngramConfig config, Services services, HttpMetrics metrics, Clock clock) {
    Map<String, String> values = config.values();
    try {
      return new Network(
          services.database(),
          services.secrets(),
          metrics.registry(),
          clock,
          new Network.Options(
              values.get("ENGRAM_DNS_RESOLVER"),
              new java.util.LinkedHashSet<>(
                  List.of(values.get("ENGRAM_SERVER_NAMES").toLowerCase().split("\\s*,\\s*"))),
              Duration.ofSeconds(Long.parseLong(values.get("ENGRAM_DOMAIN_CHECK_SECONDS"))),
              Duration.ofHours(6),
              !values.get("API_TLS_PORT").isEmpty(),
              Boolean.parseBoolean(values.get("ENGRAM_TLS_ALLOW_TLS12")),
              values.get("ENGRAM_TLS_CERTIFICATE"),
              values.get("ENGRAM_TLS_PRIVATE_KEY"),
              config.storage().dataDir()),
          new ManualProvisioner());
    } catch (java.io.IOException e) {
      throw new ConfigException(List.of("the TLS certificate could not be read or kept: " + e));
    }
  }

  private static ClientAddress trustedProxies(EngramConfig config) {
    try {
      return ClientAddress.parse(config.values().get("ENGRAM_TRUSTED_PROXIES"));
    } catch (IllegalArgumentException e) {
      throw new ConfigException(List.of("ENGRAM_TRUSTED_PROXIES: " + e.getMessage()));
    }
  }

  private static int integer(EngramConfig config, String name) {
    return Integer.parseInt(config.values().get(name));
  }

  /**
   * The memory service and its index. Only the server opens it (the index takes a lock on its
   * directory; the admin CLI runs beside a server and never needs it).
   */
  private static MemoryService openMemory(EngramConfig config, Services services, Clock clock) {
    MemoryStores stores = MemoryStores.open(services.database());
    MemoryIndex index = new MemoryIndex(
        config.storage().dataDir().resolve("index").resolve("memory"),
        stores.memories(),
        stores.changeLog(),
        clock);
    MemoryIndex.OpeningReport report = index.openingReport();
    LOG.info(
        "memory index {} in {} ms: {} memories indexed in {} segments, {} changes replayed ({})",
        report.rebuilt() ? "rebuilt" : "opened",
        report.millis(),
        report.documents(),
        report.segments(),
        report.replayedChanges(),
        report.reason());
    return new MemoryService(
        stores, index, Embedder.shared(config.inference().modelCacheDir()), clock);
  }

  public MemoryService memory() {
    return memory;
  }

  public ReflectionService reflection() {
    return reflection;
  }

  /** Storage charges and retention, now (hourly in housekeeping; tests call it). */
  public void runStorageHousekeeping() {
    storageHousekeeping.run();
  }

  public Inference inference() {
    return inference;
  }

  public int port() {
    return server.port();
  }

  /** The TLS listener's port, or -1 when API_TLS_PORT is not set. */
  public int tlsPort() {
    return server.tlsPort();
  }

  public Network network() {
    return network;
  }

  public List<Routes.Route> routes() {
    return server.routes();
  }

  public Services services() {
    return services;
  }

  /** Graceful: stop taking requests, finish in-flight ones, then close the database. */
  @Override
  public void close() {
    LOG.info("shutting down: draining in-flight requests");
    // No interrupt: a task may be writing to the index, and Lucene closes its writer for good
    // when a thread is interrupted during I/O. A task in progress finishes; none starts again.
    housekeeping.shutdown();
    try {
      housekeeping.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    server.stop();
    try {
      storageJobs.close();
    } catch (Exception e) {
      LOG.warn("storage jobs did not stop cleanly: {}", e.toString());
    }
    inference.close();
    reflection.close();
    memory.close();
    metrics.close();
    services.close();
    LOG.info("shutdown complete");
  }
}
