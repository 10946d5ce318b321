package io.engram.platform.module;

import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import java.util.List;

/**
 * One domain's face to the server (Helidon SE's {@code HttpFeature} with its lifecycle): the
 * routes it serves, the background jobs it runs, what it does once the server listens, and what
 * it lets go of on shutdown. {@code Engram} lists the modules in dependency order; the server
 * registers their routes in that order, the {@link JobScheduler} runs their jobs, and they are
 * closed in the reverse order, so a module is closed before the ones it stands on.
 */
public interface Module extends RouteModule, AutoCloseable {

  /** The domain's name, as the start-up log and the job metrics show it. */
  String name();

  @Override
  default void register(Routes routes) {}

  /** The periodic work of this domain; run by the server's one scheduler, never by the module. */
  default List<Job> jobs() {
    return List.of();
  }

  /**
   * Why this domain cannot serve what it should right now (its index failed and is recovering,
   * for example), or null when it can: {@code /v1/health/ready} answers 503 while any module says
   * so.
   */
  default String notReadyBecause() {
    return null;
  }

  /**
   * What {@code /v1/health/ready} should also say about this domain, without making the node
   * unready (a check's name and its state): an alert that cannot fire on this host, say.
   */
  default java.util.Map<String, Object> readinessNotes() {
    return java.util.Map.of();
  }

  /** Called once the server listens (a worker that takes up interrupted work, for example). */
  default void start() {}

  /** Lets go of what the module holds; called once, after the server stopped taking requests. */
  @Override
  default void close() {}
}
