package io.engram;

import io.engram.access.AccessModule;
import io.engram.access.CredentialKind;
import io.engram.actions.ActionsModule;
import io.engram.administration.AdministrationModule;
import io.engram.alerts.AlertsModule;
import io.engram.budgets.BudgetsModule;
import io.engram.capabilities.AssistantData;
import io.engram.capabilities.CapabilitiesModule;
import io.engram.console.ConsoleModule;
import io.engram.finetuning.FineTuningModule;
import io.engram.inference.Inference;
import io.engram.instances.DataClass;
import io.engram.instances.InstancesModule;
import io.engram.memory.Embedder;
import io.engram.memory.MemoryModule;
import io.engram.network.Network;
import io.engram.operations.OperationsRoutes;
import io.engram.platform.config.EngramConfig;
import io.engram.platform.http.ConnectionOwners;
import io.engram.platform.http.HttpServer;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.engram.platform.logging.OrganizationLogLevels;
import io.engram.platform.metrics.HttpMetrics;
import io.engram.platform.module.JobScheduler;
import io.engram.platform.module.Module;
import io.engram.platform.module.Modules;
import io.engram.platform.ratelimit.RateLimiter;
import io.engram.platform.ratelimit.RateLimits;
import io.engram.platform.tracing.Tracing;
import io.engram.reflection.ReflectionModule;
import io.engram.reflection.ReflectionService;
import io.engram.settings.SettingsData;
import io.engram.settings.SettingsModule;
import io.engram.store.Database;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The whole service: the modules of every domain, opened in dependency order, their routes served
 * in that order, their jobs run by one scheduler, and all of it closed in the reverse order. Each
 * module owns its routes, jobs and settings ({@link Module}); what one module needs of another is
 * handed over here, by name. {@link Main} starts one for {@code serve}; tests start one on port 0.
 */
public final class Engram implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Engram.class);

  private final Services services;
  private final HttpMetrics metrics;
  private final Tracing tracing;
  private final Modules opened;
  private final JobScheduler scheduler;
  private final HttpServer server;

  /** Once the server listens: every module's jobs scheduled, and every module started. */
  private Engram(
      Services services, HttpMetrics metrics, Tracing tracing, Modules opened, HttpServer server) {
    this.services = services;
    this.metrics = metrics;
    this.tracing = tracing;
    this.opened = opened;
    this.server = server;
    this.scheduler = new JobScheduler(metrics.registry());
    opened.all().forEach(scheduler::schedule);
    opened.all().forEach(Module::start);
  }

  /**
   * Starts the service. When no account key exists and none is configured, one is created first
   * and handed to {@code onFirstAccountKey} before the server listens, so it is shown before
   * anyone could need it.
   */
  public static Engram start(EngramConfig config, Clock clock, Consumer<String> onFirstAccountKey) {
    return start(config, clock, List.of(), onFirstAccountKey);
  }

  /** Starts the service; {@code extraModules} lets tests mount probe routes behind the real rules. */
  public static Engram start(EngramConfig config, Clock clock, List<RouteModule> extraModules) {
    return start(config, clock, extraModules, key -> {});
  }

  private static Engram start(
      EngramConfig config,
      Clock clock,
      List<RouteModule> extraModules,
      Consumer<String> onFirstAccountKey) {
    Services services = Services.open(config, clock);
    OrganizationLogLevels.install();
    HttpMetrics metrics = new HttpMetrics(clock);
    Tracing tracing = Tracing.start(
        config.tracing(), metrics.registry(), java.util.UUID.randomUUID().toString());
    LOG.info("{}", tracing);
    Modules opened = new Modules();
    try {
      List<RouteModule> routes =
          open(config, clock, services, metrics, tracing, opened, extraModules);
      services.credentials().bootstrapAccountKey().ifPresent(onFirstAccountKey);
      Network network = opened.find(Network.class);
      HttpServer server = new HttpServer(
              config,
              metrics,
              tracing,
              routes,
              network.tlsConnector(config.server().host(), config.edge().tlsPort()))
          .start();
      return new Engram(services, metrics, tracing, opened, server);
    } catch (RuntimeException e) {
      opened.close();
      tracing.close();
      metrics.close();
      services.close();
      throw e;
    }
  }

  /** Opens every module in dependency order; returns the route modules in serving order. */
  private static List<RouteModule> open(
      EngramConfig config,
      Clock clock,
      Services services,
      HttpMetrics metrics,
      Tracing tracing,
      Modules opened,
      List<RouteModule> extraModules) {
    Database database = services.database();
    long maxBody = config.server().maxBodyBytes();
    services.cluster().registerMetrics(metrics.registry());
    Embedder.shared(config.inference().modelCacheDir()).registerMetrics(metrics.registry());
    database.statements().registerMetrics(metrics.registry());
    opened.add(new SettingsModule(
        services.configs(), services.cluster(), database.kind() == Database.Kind.POSTGRESQL));
    Network network =
        opened.add(Network.open(config, database, services.secrets(), metrics.registry(), clock));
    services.organizationService().onPlanChange(network::planChanged);
    RateLimiter windows = RateLimits.open(services.cluster(), clock);
    ConnectionOwners connections = new ConnectionOwners();
    AccessModule access = opened.add(new AccessModule(
        services.credentials(),
        services.sessions(),
        windows,
        metrics,
        config,
        services.configs(),
        connections,
        network.state()));
    access.openInference(services.organizations()::find);
    network.serving(services.organizationService(), services.configs(), maxBody);
    InstancesModule instances = opened.add(new InstancesModule(
        config,
        database,
        services.secrets(),
        services.organizationService(),
        services.configs(),
        metrics.registry(),
        network.egress(),
        clock));
    MemoryModule memory = opened.add(MemoryModule.open(
        config,
        database,
        services.cluster(),
        metrics.registry(),
        clock,
        config.memoryIndex().solr()
            ? stores ->
                io.engram.memory.solr.SolrMemoryIndex.open(config.memoryIndex(), stores, clock)
            : MemoryModule.embedded(config, clock)));
    instances.includeInSnapshots(memory.data(), new AssistantData(), new SettingsData());
    services.memoryHandlers().bind(memory);
    ReflectionModule reflection = opened.add(
        new ReflectionModule(database, memory, config.reflectionScheduler(), maxBody, clock));
    memory.explainProvenanceWith(reflection.service()::provenance);
    memory.erasures().include(instances.services().erasure());
    memory.erasures().include(reflection.service().erasure());
    AlertsModule alerts = opened.add(new AlertsModule(
        config,
        database,
        services.secrets(),
        services.organizations(),
        services.organizationService(),
        services.configs(),
        connections,
        metrics,
        instances,
        network,
        clock));
    ActionsModule actions = opened.add(new ActionsModule(
        database,
        services.secrets(),
        services.assistants(),
        services.organizationService(),
        services.reminders(),
        alerts,
        config.monitoring().alertInterval(),
        metrics.registry(),
        network.egress(),
        maxBody,
        clock));
    BudgetsModule budgets = opened.add(new BudgetsModule(
            database,
            services.cluster(),
            services.organizationService(),
            (org, id) ->
                services.credentials().find(CredentialKind.API_KEY, org, id).isPresent()
                    || services
                        .credentials()
                        .find(CredentialKind.CONTEXT_TOKEN, org, id)
                        .isPresent(),
            (org, id) ->
                services.assistants().versionAt(org, id, clock.instant()).isPresent(),
            maxBody,
            clock)
        .alertThrough(alerts::budgetReached));
    Inference inference = opened
        .add(Inference.open(
            config,
            database,
            memory.reads(),
            memory.erasures(),
            Embedder.shared(config.inference().modelCacheDir()),
            metrics.registry(),
            services.configs(),
            instances.services().history(),
            network.egress(),
            services.cluster(),
            windows,
            services.secrets(),
            budgets.budgets(),
            clock))
        .serving(
            access,
            services.organizations(),
            new Inference.Assistants(
                services.assistants(),
                actions.executor(),
                config.inference().assistantMaxToolSteps()),
            maxBody,
            tracing.tracer(),
            clock);
    alerts.countStorage(org -> inference.storedBytes(org).orElse(0));
    inference.alertProvidersThrough(alerts::providerMisconfigured);
    // The request log holds conversations: a policy that keeps conversations shorter keeps it so.
    inference.shortenRequestLogBy(
        org -> instances.services().retention().maxAge(org, DataClass.CONVERSATION_HISTORY));
    AdministrationModule administration = opened.add(new AdministrationModule(
            services.organizationService(), services.configs(), services.audit(), maxBody)
        .countInUse(org -> Map.of("connections", connections.open(org)))
        .countInUse(inference::inUse));
    FineTuningModule fineTuning = opened.add(new FineTuningModule(
        config,
        database,
        instances.services(),
        inference,
        services.configs(),
        services.organizationService(),
        metrics.registry(),
        network.egress(),
        clock));
    List<RouteModule> routes = new ArrayList<>(List.of(
        opened.add(new ConsoleModule()),
        opened.add(new OperationsRoutes(database, services.cluster(), metrics, opened::all)),
        administration,
        access,
        opened.add(new CapabilitiesModule(services.assistants(), maxBody)),
        memory,
        reflection,
        actions,
        inference,
        budgets,
        instances,
        alerts,
        fineTuning));
    routes.addAll(extraModules);
    routes.add(network);
    return routes;
  }

  public MemoryModule memory() {
    return opened.find(MemoryModule.class);
  }

  public ReflectionService reflection() {
    return opened.find(ReflectionModule.class).service();
  }

  /** Storage charges and retention, now (hourly in the background; tests call it). */
  public void runStorageHousekeeping() {
    opened.find(InstancesModule.class).hourly();
  }

  public Inference inference() {
    return opened.find(Inference.class);
  }

  public int port() {
    return server.port();
  }

  /** The TLS listener's port, or -1 when API_TLS_PORT is not set. */
  public int tlsPort() {
    return server.tlsPort();
  }

  public Network network() {
    return opened.find(Network.class);
  }

  public List<Routes.Route> routes() {
    return server.routes();
  }

  public Services services() {
    return services;
  }

  /** The modules in the order they were opened (their dependency order). */
  public List<Module> modules() {
    return opened.all();
  }

  /** Every background job this node runs, by module (as the start-up log lists them). */
  public List<JobScheduler.Scheduled> jobs() {
    return scheduler.scheduled();
  }

  /** Graceful: stop the jobs, stop taking requests, finish in-flight ones, then close the rest. */
  @Override
  public void close() {
    LOG.info("shutting down: draining in-flight requests");
    scheduler.close();
    server.stop();
    opened.close();
    tracing.close(); // after the last request's spans ended: what is queued is exported
    metrics.close();
    services.close();
    LOG.info("shutdown complete");
  }
}
