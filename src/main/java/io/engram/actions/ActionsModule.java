package io.engram.actions;

import io.engram.alerts.AlertsModule;
import io.engram.capabilities.AssistantService;
import io.engram.platform.crypto.SecretBox;
import io.engram.platform.http.Routes;
import io.engram.platform.module.Job;
import io.engram.platform.module.Module;
import io.engram.platform.net.Egress;
import io.engram.store.Database;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.List;

/**
 * What assistants' capabilities do: the bridges to the organization's systems, the executor that
 * carries out a call, their routes, and reminders that fall due (checked as often as alerts are,
 * and delivered on the same webhooks).
 */
public final class ActionsModule implements Module {
  private final ActionBridges bridges;
  private final CapabilityExecutor executor;
  private final AssistantService assistants;
  private final Reminders reminders;
  private final AlertsModule alerts;
  private final Duration reminderCheck;
  private final long maxBodyBytes;

  public ActionsModule(
      Database database,
      SecretBox secrets,
      AssistantService assistants,
      Reminders reminders,
      AlertsModule alerts,
      Duration reminderCheck,
      MeterRegistry registry,
      Egress egress,
      long maxBodyBytes,
      Clock clock) {
    this.bridges = new ActionBridges(database, secrets, clock);
    this.executor = new CapabilityExecutor(
        assistants.registry(),
        bridges,
        new Executions(database),
        database,
        registry,
        egress,
        clock);
    // The execute route runs a bridged capability as a chat would (one rule for both).
    assistants.carryOutWith(executor);
    this.assistants = assistants;
    this.reminders = reminders;
    this.alerts = alerts;
    this.reminderCheck = reminderCheck;
    this.maxBodyBytes = maxBodyBytes;
  }

  /** Who carries out an assistant's capability calls (the gateway's assistant chats too). */
  public CapabilityExecutor executor() {
    return executor;
  }

  @Override
  public String name() {
    return "actions";
  }

  @Override
  public void register(Routes routes) {
    new ActionRoutes(bridges, executor, assistants, maxBodyBytes).register(routes);
  }

  @Override
  public List<Job> jobs() {
    return List.of(Job.every(
        reminderCheck,
        "deliver due reminders",
        () -> reminders.deliverDue(alerts.channels(), alerts.webhooks())));
  }
}
