package io.engram.finetuning;

import io.engram.finetuning.trainer.TorchRuntime;
import io.engram.inference.Inference;
import io.engram.instances.InstanceServices;
import io.engram.organizations.OrganizationStore;
import io.engram.platform.config.EngramConfig;
import io.engram.platform.http.Routes;
import io.engram.platform.module.Job;
import io.engram.platform.module.Module;
import io.engram.platform.net.Egress;
import io.engram.settings.OrganizationConfigs;
import io.engram.store.Database;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.List;

/** Fine-tuning: the jobs and their routes, and this node's trainer, started once serving. */
public final class FineTuningModule implements Module {
  private final FineTuning fineTuning;
  private final long maxBodyBytes;
  private final boolean soleNode;

  public FineTuningModule(
      EngramConfig config,
      Database database,
      InstanceServices storage,
      Inference inference,
      OrganizationConfigs configs,
      OrganizationStore organizations,
      MeterRegistry registry,
      Egress egress,
      Clock clock) {
    EngramConfig.FineTuning settings = config.fineTuning();
    this.fineTuning = new FineTuning(
        database,
        storage,
        inference.catalog(),
        inference.uploads(),
        configs,
        organizations::get,
        registry,
        clock,
        new FineTuning.Options(
            settings.jobsPerNode(),
            settings.lease(),
            settings.torchCacheDir().orElseGet(TorchRuntime::defaultCacheDir),
            config.inference().upstream().filter(upstream -> settings.upstream()),
            settings.upstreamPoll(),
            Duration.ofSeconds(config.server().requestTimeoutSeconds()),
            egress));
    this.maxBodyBytes = config.server().maxBodyBytes();
    this.soleNode = !config.storage().usesPostgres();
  }

  @Override
  public String name() {
    return "fine-tuning";
  }

  @Override
  public void register(Routes routes) {
    new FineTuningRoutes(fineTuning, maxBodyBytes).register(routes);
  }

  @Override
  public List<Job> jobs() {
    return List.of(fineTuning.leaseRenewal());
  }

  @Override
  public void start() {
    fineTuning.start(soleNode);
  }

  @Override
  public void close() {
    fineTuning.close();
  }
}
