package io.engram;

import io.engram.access.AccessModule;
import io.engram.actions.ActionsModule;
import io.engram.administration.AdministrationModule;
import io.engram.alerts.AlertsModule;
import io.engram.budgets.BudgetsModule;
import io.engram.capabilities.AssistantData;
import io.engram.capabilities.CapabilitiesModule;
import io.engram.console.ConsoleModule;
import io.engram.finetuning.FineTuningModule;
import io.engram.guardrails.GuardrailsModule;
import io.engram.inference.Inference;
import io.engram.instances.InstancesModule;
import io.engram.memory.Embedder;
import io.engram.memory.MemoryModule;
import io.engram.memory.erasure.ErasureModule;
import io.engram.memory.lucene.LuceneMemoryIndex;
import io.engram.memory.solr.SolrMemoryIndex;
import io.engram.memory.transfer.MemoryTransferModule;
import io.engram.network.Network;
import io.engram.operations.OperationsRoutes;
import io.engram.platform.config.EngramConfig;
import io.engram.platform.http.ConnectionOwners;
import io.engram.platform.http.RouteModule;
import io.engram.platform.metrics.HttpMetrics;
import io.engram.platform.module.Modules;
import io.engram.platform.ratelimit.RateLimiter;
import io.engram.platform.ratelimit.RateLimits;
import io.engram.platform.tracing.Tracing;
import io.engram.reflection.ReflectionModule;
import io.engram.settings.SettingsData;
import io.engram.settings.SettingsModule;
import io.engram.store.Database;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * How the service is put together: every domain's module opened in dependency order, each handed
 * by name what it needs of the ones before it (no container: the wiring reads top to bottom).
 * {@link Engram} runs what this opens.
 */
final class Assembly {
  private Assembly() {}

  /** Opens every module in dependency order; returns the route modules in serving order. */
  static List<RouteModule> open(
      EngramConfig config,
      Clock clock,
      Services services,
      HttpMetrics metrics,
      Tracing tracing,
      Modules opened,
      List<RouteModule> extraModules) {
    Database database = services.database();
    long maxBody = config.server().maxBodyBytes();
    services.cluster().registerMetrics(metrics.registry());
    Embedder.shared(config.inference().modelCacheDir()).registerMetrics(metrics.registry());
    database.statements().registerMetrics(metrics.registry());
    opened.add(new SettingsModule(
        services.configs(), services.cluster(), database.kind() == Database.Kind.POSTGRESQL));
    Network network =
        opened.add(Network.open(config, database, services.secrets(), metrics.registry(), clock));
    services.organizationService().onPlanChange(network::planChanged);
    RateLimiter windows = RateLimits.open(services.cluster(), clock);
    ConnectionOwners connections = new ConnectionOwners();
    AccessModule access = opened.add(new AccessModule(
        services.credentials(),
        services.sessions(),
        windows,
        metrics,
        config,
        services.configs(),
        connections,
        network.state()));
    access.findOrganizationsWith(services.organizations()::find);
    network.serving(services.organizations(), services.configs(), maxBody);
    InstancesModule instances = opened.add(new InstancesModule(
        config,
        database,
        services.secrets(),
        services.organizations(),
        services.configs(),
        metrics.registry(),
        network.egress(),
        clock));
    MemoryModule memory = opened.add(MemoryModule.open(
        config,
        database,
        services.cluster(),
        metrics.registry(),
        clock,
        config.memoryIndex().solr()
            ? stores -> SolrMemoryIndex.open(config.memoryIndex(), stores, clock)
            : LuceneMemoryIndex.embedded(config, clock)));
    GuardrailsModule guardrails = opened.add(
        new GuardrailsModule(database, network.egress(), metrics.registry(), maxBody, clock));
    memory.writes().screenWith(guardrails.guardrails()::memoryWrite);
    MemoryTransferModule transfer = opened.add(new MemoryTransferModule(memory, clock));
    ErasureModule erasure = opened.add(new ErasureModule(memory, maxBody, clock));
    instances.includeInSnapshots(memory.data(), new AssistantData(), new SettingsData());
    services.memoryHandlers().bind(memory);
    ReflectionModule reflection = opened.add(
        new ReflectionModule(database, memory, config.reflectionScheduler(), maxBody, clock));
    memory.explainProvenanceWith(reflection.provenanceNotes());
    erasure.include(instances.erasure()).include(reflection.erasure());
    AlertsModule alerts = opened.add(new AlertsModule(
        config,
        database,
        services.secrets(),
        services.organizations(),
        services.configs(),
        connections,
        metrics,
        instances,
        network,
        clock));
    ActionsModule actions = opened.add(new ActionsModule(
        database,
        services.secrets(),
        services.assistants(),
        services.reminders(),
        alerts,
        config.monitoring().alertInterval(),
        metrics.registry(),
        network.egress(),
        maxBody,
        clock));
    BudgetsModule budgets = opened.add(new BudgetsModule(
            database,
            services.cluster(),
            services::holdsCredential,
            (org, id) ->
                services.assistants().versionAt(org, id, clock.instant()).isPresent(),
            maxBody,
            clock)
        .alertThrough(alerts::budgetReached));
    Inference inference = opened
        .add(Inference.open(
            config,
            database,
            memory.reads(),
            erasure,
            Embedder.shared(config.inference().modelCacheDir()),
            metrics.registry(),
            services.configs(),
            instances.history(),
            network.egress(),
            services.cluster(),
            windows,
            services.secrets(),
            budgets.budgets(),
            guardrails.guardrails(),
            clock))
        .serving(
            access,
            services.organizations(),
            new Inference.Assistants(
                services.assistants(),
                actions.executor(),
                config.inference().assistantMaxToolSteps()),
            maxBody,
            tracing.tracer(),
            clock);
    alerts.countStorage(org -> inference.storedBytes(org).orElse(0));
    guardrails.guardrails().alertTo(new io.engram.guardrails.Guardrails.BlockAlerts() {
      @Override
      public void blocked(String orgId, String message) {
        alerts.guardrailBlocked(orgId, message);
      }

      @Override
      public void cleared(String orgId) {
        alerts.guardrailsQuiet(orgId);
      }
    });
    inference.alertProvidersThrough(alerts::providerMisconfigured);
    // The request log holds conversations: a policy that keeps conversations shorter keeps it so.
    inference.shortenRequestLogBy(instances::conversationsKeptFor);
    AdministrationModule administration = opened.add(new AdministrationModule(
            services.organizationService(), services.configs(), services.audit(), maxBody)
        .countInUse(org -> Map.of("connections", connections.open(org)))
        .countInUse(inference::inUse));
    FineTuningModule fineTuning = opened.add(new FineTuningModule(
        config,
        database,
        instances.services(),
        inference,
        services.configs(),
        services.organizations(),
        metrics.registry(),
        network.egress(),
        clock));
    List<RouteModule> routes = new ArrayList<>(List.of(
        opened.add(new ConsoleModule()),
        opened.add(new OperationsRoutes(database, services.cluster(), metrics, opened::all)),
        administration,
        access,
        opened.add(new CapabilitiesModule(services.assistants(), maxBody)),
        transfer,
        erasure,
        memory,
        reflection,
        actions,
        inference,
        budgets,
        guardrails,
        instances,
        alerts,
        fineTuning));
    routes.addAll(extraModules);
    routes.add(network);
    return routes;
  }
}
