package io.engram.guardrails;

import io.engram.platform.http.Routes;
import io.engram.platform.module.Job;
import io.engram.platform.module.Module;
import io.engram.store.Database;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.List;

/**
 * Guardrails (docs/guardrails.md): their routes, the guardrails every node keeps in memory and
 * runs where text flows ({@link #guardrails()}: the gateway's input, memory writes and the memory
 * block), and other nodes' changes followed every second.
 */
public final class GuardrailsModule implements Module {
  private final Guardrails guardrails;
  private final GuardrailRoutes routes;

  public GuardrailsModule(
      Database database,
      io.engram.platform.net.Egress egress,
      MeterRegistry registry,
      long maxBodyBytes,
      Clock clock) {
    Webhooks webhooks = new Webhooks(egress, registry);
    this.guardrails =
        new Guardrails(new GuardrailStore(database, webhooks), webhooks, registry, clock);
    this.routes = new GuardrailRoutes(guardrails, maxBodyBytes);
  }

  public Guardrails guardrails() {
    return guardrails;
  }

  @Override
  public String name() {
    return "guardrails";
  }

  @Override
  public void register(Routes table) {
    routes.register(table);
  }

  @Override
  public List<Job> jobs() {
    return List.of(
        Job.every(Duration.ofSeconds(1), "follow guardrails changed", guardrails::follow));
  }
}
