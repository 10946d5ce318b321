package io.engram.memory.erasure;

import io.engram.memory.MemoryModule;
import io.engram.memory.MemoryRoutes;
import io.engram.platform.http.Routes;
import io.engram.platform.module.Job;
import io.engram.platform.module.Module;
import io.engram.store.ErasureParticipant;
import java.time.Clock;
import java.time.Duration;
import java.util.List;

/**
 * Provable erasure of end users' (or one filter's) memories and of what every other domain keeps
 * of them ({@link ErasureParticipant}s: instances, reflection, the gateway), with receipts; its
 * routes are served before the memory's own. An erasure whose node stopped before its receipt is
 * taken over by another.
 */
public final class ErasureModule implements Module {
  private final Erasures erasures;
  private final long maxBodyBytes;

  public ErasureModule(MemoryModule memory, long maxBodyBytes, Clock clock) {
    this.erasures = new Erasures(memory.stores(), memory.index(), clock);
    this.maxBodyBytes = maxBodyBytes;
  }

  /** What else an erasure must reach: another domain's copies of the erased memories. */
  public ErasureModule include(ErasureParticipant participant) {
    erasures.include(participant);
    return this;
  }

  @Override
  public String name() {
    return "memory erasure";
  }

  @Override
  public void register(Routes table) {
    ErasureRoutes routes = new ErasureRoutes(erasures, maxBodyBytes);
    MemoryRoutes.BASES.forEach(base -> routes.register(table, base));
  }

  @Override
  public List<Job> jobs() {
    return List.of(
        Job.every(Duration.ofSeconds(5), "resume abandoned erasures", erasures::resumeAbandoned));
  }

  @Override
  public void close() {
    erasures.close(); // a running erasure stops here; its lease runs out and it is resumed
  }
}
