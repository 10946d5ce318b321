package io.engram;

import io.engram.inference.Inference;
import io.engram.instances.InstancesModule;
import io.engram.memory.MemoryModule;
import io.engram.network.Network;
import io.engram.platform.config.EngramConfig;
import io.engram.platform.http.HttpServer;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.engram.platform.logging.OrganizationLogLevels;
import io.engram.platform.metrics.HttpMetrics;
import io.engram.platform.module.JobScheduler;
import io.engram.platform.module.Module;
import io.engram.platform.module.Modules;
import io.engram.platform.tracing.Tracing;
import io.engram.reflection.ReflectionModule;
import io.engram.reflection.ReflectionService;
import java.time.Clock;
import java.util.List;
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
          Assembly.open(config, clock, services, metrics, tracing, opened, extraModules);
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
