package io.engram.memory.transfer;

import io.engram.memory.MemoryModule;
import io.engram.memory.MemoryRoutes;
import io.engram.platform.http.Routes;
import io.engram.platform.module.Module;
import java.time.Clock;

/**
 * A boundary's memories out and in as JSON Lines ({@code GET .../export}, {@code POST
 * .../import}), at the organization level and inside an agent. Its routes are served before the
 * memory's own, whose {@code /{memory_id}} would otherwise take "export" for an id.
 */
public final class MemoryTransferModule implements Module {
  private final MemoryTransferRoutes routes;

  public MemoryTransferModule(MemoryModule memory, Clock clock) {
    this.routes = new MemoryTransferRoutes(
        new MemoryExport(memory.stores()),
        new MemoryImport(
            memory.stores(), memory.index(), memory.embedder(), memory.writes()::screened, clock));
  }

  @Override
  public String name() {
    return "memory transfer";
  }

  @Override
  public void register(Routes table) {
    MemoryRoutes.BASES.forEach(base -> routes.register(table, base));
  }
}
