package io.engram.memory;

import io.engram.platform.cluster.ChangeSignal;
import io.engram.platform.cluster.Cluster;
import io.engram.platform.config.EngramConfig;
import io.engram.platform.http.Routes;
import io.engram.platform.module.Job;
import io.engram.platform.module.Module;
import io.engram.store.Database;
import io.engram.store.OrganizationData;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The memory: its service and index, its routes (the memory API, its settings, the MCP server),
 * and the index's upkeep (commits every few seconds, the other nodes' changes followed).
 */
public final class MemoryModule implements Module {
  private static final Logger LOG = LoggerFactory.getLogger(MemoryModule.class);

  private final MemoryStores stores;
  private final MemoryIndex index;
  private final Embedder embedder;
  private final MemoryReads reads;
  private final MemoryWrites writes;
  private final MemoryEvents events;
  private final MemoryControl control;
  private final MemoryHousekeeping housekeeping;
  private final MemoryMaintenance maintenance;
  private final EngramConfig.Server server;
  private final boolean sharedDatabase;
  private final Clock clock;
  private volatile ProvenanceNotes notes = ProvenanceNotes.NONE;

  private MemoryModule(
      MemoryStores stores,
      MemoryIndex index,
      Embedder embedder,
      EngramConfig.Server server,
      boolean sharedDatabase,
      Clock clock) {
    this.stores = stores;
    this.index = index;
    this.embedder = embedder;
    this.reads = new MemoryReads(stores, index, embedder, clock);
    this.writes = new MemoryWrites(stores, index, embedder, clock);
    this.events = new MemoryEvents(stores, embedder, clock);
    this.control = new MemoryControl(stores, index, embedder, clock);
    this.housekeeping = new MemoryHousekeeping(stores, index, clock);
    this.maintenance = new MemoryMaintenance(stores, index, clock);

    this.server = server;
    this.sharedDatabase = sharedDatabase;
    this.clock = clock;
  }

  /**
   * Opens the index (rebuilt from the database when it cannot be trusted) and the service. Only
   * the server opens it: the index takes a lock on its directory, and the admin CLI runs beside a
   * server.
   */
  public static MemoryModule open(
      EngramConfig config,
      Database database,
      Cluster cluster,
      MeterRegistry registry,
      Clock clock,
      IndexOpener opener) {
    MemoryStores stores = MemoryStores.open(database);
    MemoryIndex index = opener.open(stores);
    MemoryIndex.OpeningReport report = index.openingReport();
    LOG.info(
        "memory index {} in {} ms: {} memories indexed{}, {} changes replayed ({}); engine {}",
        report.rebuilt() ? "rebuilt" : "opened",
        report.millis(),
        report.documents(),
        // Segments are the embedded index's; a distributed engine reports none (-1).
        report.segments() < 0 ? "" : " in " + report.segments() + " segments",
        report.replayedChanges(),
        report.reason(),
        index.engine());
    // A change the index could not read while the database was away is replayed as soon as it is
    // back, so the node is ready with it (the recovery job would take up to a second more).
    database.afterOutage(index::recoverIfNeeded);
    boolean shared = database.kind() == Database.Kind.POSTGRESQL;
    if (shared) {
      followOtherNodesAtOnce(cluster, index);
    }
    Gauge.builder("engram_memory_index_ready", () -> index.notReadyBecause() == null ? 1 : 0)
        .description("1 while the memory index serves what the database holds; 0 while it is"
            + " away or recovering")
        .tag("engine", index.engine())
        .register(registry);
    index.measureWith(registry);
    return new MemoryModule(
        stores,
        index,
        Embedder.shared(config.inference().modelCacheDir()),
        config.server(),
        shared,
        clock);
  }

  /**
   * Opens the memory index over the memory's stores: the embedded one ({@link #embedded}), or a
   * distributed engine's (ENGRAM_MEMORY_INDEX; the engine's package sits above this one and is
   * chosen where the server is put together).
   */
  public interface IndexOpener {
    MemoryIndex open(MemoryStores stores);
  }

  /**
   * With Redis, a node that writes a memory tells the others, which follow at once (milliseconds)
   * instead of at their next one-second poll. At most 20 catch-ups a second: each refreshes the
   * index's searcher, which costs more than a write when writes come by the dozen (measured:
   * docs/benchmarks.md, "Three nodes").
   */
  private static void followOtherNodesAtOnce(Cluster cluster, MemoryIndex index) {
    if (cluster.redis().isEmpty()) {
      return;
    }
    ChangeSignal changes = cluster.keep(new ChangeSignal(
        cluster.bus(),
        "engram:memory-changes",
        subject -> index.followNew(),
        Duration.ofMillis(50)));
    index.announceChangesWith(() -> changes.announce("memory"));
  }

  /** Where a memory's provenance finds its notes (reflection, which stands on the memory). */
  public MemoryModule explainProvenanceWith(ProvenanceNotes notes) {
    this.notes = notes;
    return this;
  }

  /** The memory's part in snapshots and restores (its tables, the index following). */
  public OrganizationData data() {
    return new MemoryData(index, reads);
  }

  /** Reads and retrieval, and the uses that feed activation. */
  public MemoryReads reads() {
    return reads;
  }

  public MemoryWrites writes() {
    return writes;
  }

  /** What reflection may read and change in an organization's memory. */
  public MemoryMaintenance maintenance() {
    return maintenance;
  }

  /** The memory's stores, for the modules that stand on them (transfer, erasure). */
  public MemoryStores stores() {
    return stores;
  }

  /** The memory's index, kept current by whoever writes a memory. */
  public MemoryIndex index() {
    return index;
  }

  public Embedder embedder() {
    return embedder;
  }

  MemoryHousekeeping housekeeping() {
    return housekeeping;
  }

  @Override
  public String name() {
    return "memory";
  }

  @Override
  public void register(Routes routes) {
    new MemoryRoutes(
            new MemoryRoutes.Parts(reads, writes, events, control),
            notes,
            server.maxBodyBytes(),
            clock)
        .register(routes);
    new MemorySettingsRoutes(control, server.maxBodyBytes()).register(routes);
    new McpRoutes(
            new McpTools(reads, writes, control, clock),
            reads,
            server.maxBodyBytes(),
            server.corsOrigins())
        .register(routes);
  }

  @Override
  public List<Job> jobs() {
    List<Job> jobs = new ArrayList<>(List.of(
        new Job(
            "purge expired idempotency keys",
            Duration.ofMinutes(1),
            Duration.ofHours(1),
            housekeeping::purgeExpiredIdempotencyKeys),
        // The index is derived data: committing every few seconds bounds what a restart replays.
        Job.every(Duration.ofSeconds(5), "commit the memory index", index::commitIfChanged),
        // A failed index (a full disk closes Lucene's writer) reopens by itself once it can.
        Job.every(Duration.ofSeconds(1), "recover the memory index", index::recoverIfNeeded),
        // Retrieval never returns an expired memory; this tombstones it, with why, soon after.
        Job.every(Duration.ofSeconds(30), "tombstone expired memories", () -> {
          while (housekeeping.tombstoneExpired(200) == 200) {
            // a backlog (after downtime) is worked off in batches of 200
          }
        }),
        new Job(
            "digest memories written before deduplication",
            Duration.ofSeconds(1),
            Duration.ofMinutes(1),
            housekeeping::digestUndigested)));
    // A distributed engine's own upkeep (Solr's catch-up and shard check).
    jobs.addAll(index.jobs());
    if (sharedDatabase) {
      // Other nodes write to the same database: follow their changes through the change log.
      jobs.add(Job.every(Duration.ofSeconds(1), "follow the memory change log", index::tail));
    }
    return jobs;
  }

  @Override
  public String notReadyBecause() {
    return index.notReadyBecause();
  }

  @Override
  public void close() {
    reads.close();
    index.close();
  }
}
