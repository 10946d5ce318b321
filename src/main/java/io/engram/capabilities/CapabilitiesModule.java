package io.engram.capabilities;

import io.engram.access.Guard;
import io.engram.platform.http.Routes;
import io.engram.platform.module.Module;

/** Assistants and the capabilities each has: their routes under /api. */
public final class CapabilitiesModule implements Module {
  private final AssistantService assistants;
  private final Guard guard;
  private final long maxBodyBytes;

  public CapabilitiesModule(AssistantService assistants, Guard guard, long maxBodyBytes) {
    this.assistants = assistants;
    this.guard = guard;
    this.maxBodyBytes = maxBodyBytes;
  }

  @Override
  public String name() {
    return "capabilities";
  }

  @Override
  public void register(Routes routes) {
    new AssistantRoutes(assistants, guard, maxBodyBytes).register(routes);
    new CapabilityRoutes(assistants, guard, maxBodyBytes).register(routes);
  }
}
