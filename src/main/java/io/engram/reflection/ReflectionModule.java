package io.engram.reflection;

import io.engram.memory.MemoryModule;
import io.engram.memory.ProvenanceNotes;
import io.engram.platform.http.Routes;
import io.engram.platform.module.Job;
import io.engram.platform.module.Module;
import io.engram.store.Database;
import io.engram.store.ErasureParticipant;
import java.time.Clock;
import java.time.Duration;
import java.util.List;

/**
 * Reflection: the processes that revisit an organization's memory, their routes, and the tick that
 * starts the runs that are due (unless ENGRAM_REFLECTION_SCHEDULER=false leaves that to others).
 */
public final class ReflectionModule implements Module {
  /** How often a node looks for organizations whose reflection run is due. */
  static final Duration TICK = Duration.ofSeconds(30);

  private final ReflectionService reflection;
  private final ReflectionReport report;
  private final boolean scheduler;
  private final long maxBodyBytes;

  public ReflectionModule(
      Database database, MemoryModule memory, boolean scheduler, long maxBodyBytes, Clock clock) {
    this.reflection = new ReflectionService(database, memory.maintenance(), clock);
    this.report = new ReflectionReport(reflection, memory.maintenance(), clock);
    this.scheduler = scheduler;
    this.maxBodyBytes = maxBodyBytes;
  }

  public ReflectionService service() {
    return reflection;
  }

  /** What an erasure of memories must also reach here: reflection's runs and notes about them. */
  public ErasureParticipant erasure() {
    return reflection.erasure();
  }

  /** The notes a memory's provenance shows of what reflection did to it. */
  public ProvenanceNotes provenanceNotes() {
    return reflection::provenance;
  }

  @Override
  public String name() {
    return "reflection";
  }

  @Override
  public void register(Routes routes) {
    new ReflectionRoutes(reflection, report, maxBodyBytes).register(routes);
  }

  /**
   * Each organization's interval is counted from its last run in the database, so the schedule
   * survives restarts, and the lease keeps nodes from running one organization twice.
   */
  @Override
  public List<Job> jobs() {
    return scheduler
        ? List.of(Job.every(TICK, "start scheduled reflection runs", reflection::tick))
        : List.of();
  }

  @Override
  public void close() {
    reflection.close();
  }
}
