package io.engram.capabilities;

import io.engram.platform.http.Routes;
import io.engram.platform.module.Module;

/** Assistants and the capabilities each has: their routes under /api. */
public final class CapabilitiesModule implements Module {
  private final AssistantService assistants;
  private final long maxBodyBytes;

  public CapabilitiesModule(AssistantService assistants, long maxBodyBytes) {
    this.assistants = assistants;
    this.maxBodyBytes = maxBodyBytes;
  }

  @Override
  public String name() {
    return "capabilities";
  }

  @Override
  public void register(Routes routes) {
    new AssistantRoutes(assistants, maxBodyBytes).register(routes);
    new CapabilityRoutes(assistants, maxBodyBytes).register(routes);
  }
}
