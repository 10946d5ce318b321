package io.engram.finetuning;

import io.engram.finetuning.trainer.LoraTrainer;
import io.engram.finetuning.trainer.TorchRuntime;
import io.engram.inference.local.LocalEngine;
import io.engram.inference.models.ModelCatalog;
import io.engram.inference.models.ModelUploads;
import io.engram.instances.InstanceServices;
import io.engram.instances.files.FileStore;
import io.engram.instances.storage.StoragePath;
import io.engram.instances.storage.StoredFile;
import io.engram.organizations.Organization;
import io.engram.platform.config.EngramConfig;
import io.engram.platform.module.Job;
import io.engram.settings.OrganizationConfigs;
import io.engram.store.Database;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fine-tuning: training files, jobs, the node's runner and the local trainer, wired together.
 * The trainer's PyTorch runtime starts with the first job, not with the server.
 */
public final class FineTuning implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FineTuning.class);

  /**
   * The operator's settings: jobs at once per node, the lease, where libtorch is unpacked, and
   * the upstream whose fine-tuning API trains the upstream's models (empty: none), polled so often.
   */
  public record Options(
      int jobsPerNode,
      Duration lease,
      Path torchCache,
      Optional<EngramConfig.Upstream> upstream,
      Duration upstreamPoll,
      Duration upstreamTimeout,
      io.engram.platform.net.Egress egress) {}

  private final FineTuningJobs jobs;
  private final TrainingFiles files;
  private final InstanceServices storage;
  private final ModelCatalog catalog;
  private final ModelUploads uploads;
  private final OrganizationConfigs configs;
  private final FineTuningMetrics metrics;
  private final Options options;
  private final FineTuningRunner runner;
  private final Optional<UpstreamFineTuning> upstream;
  private volatile LoraTrainer trainer;

  public FineTuning(
      Database db,
      InstanceServices storage,
      ModelCatalog catalog,
      ModelUploads uploads,
      OrganizationConfigs configs,
      Function<String, Organization> organizations,
      MeterRegistry registry,
      Clock clock,
      Options options) {
    this.jobs = new FineTuningJobs(db, clock);
    this.files = new TrainingFiles(db, storage, clock);
    this.storage = storage;
    this.catalog = catalog;
    this.uploads = uploads;
    this.configs = configs;
    this.metrics = new FineTuningMetrics(registry);
    this.options = options;
    this.runner =
        new FineTuningRunner(this, organizations, options.jobsPerNode(), options.lease(), clock);
    this.upstream = options
        .upstream()
        .map(config -> new UpstreamFineTuning(
            config.baseUrl(), config.apiKey(), options.upstreamTimeout(), options.egress()));
    options
        .upstream()
        .ifPresent(config -> catalog.serveOrganizationModels(new UpstreamModels(
            jobs,
            upstream.orElseThrow(),
            config.baseUrl(),
            config.apiKey(),
            options.upstreamTimeout(),
            config.contextLength())));
    uploads.onDelete((orgId, model) -> jobs.byModel(orgId, model).ifPresent(job -> {
      freeAdapter(organizations.apply(orgId), job);
      jobs.modelDeleted(job.id());
    }));
  }

  public void start(boolean soleNode) {
    runner.start(soleNode);
  }

  static String adapterFolder(String jobId) {
    return "lora_adapters/" + jobId + "/";
  }

  /** Deleting a fine-tuned model frees its adapter in the instance's storage. */
  private void freeAdapter(Organization org, FineTuningJob job) {
    FileStore.Actor actor = new FileStore.Actor(null, job.id());
    for (StoredFile file :
        storage.files().list(job.instanceId(), adapterFolder(job.id()), null, 100)) {
      storage.files().delete(org, job.instanceId(), StoragePath.of(file.path(), "adapter"), actor);
    }
    LOG.info("fine-tuning: the adapter of job {} was freed with its model", job.id());
  }

  /** The directory of a local model the organization can train from. */
  Optional<Path> baseModelDir(String orgId, String model) {
    return catalog
        .find(orgId, model)
        .filter(entry -> entry.engine() instanceof LocalEngine)
        .map(entry -> ((LocalEngine) entry.engine()).directory());
  }

  /**
   * The upstream's name for a model the organization can fine-tune there: one the upstream serves,
   * when the upstream trainer is on.
   */
  Optional<String> upstreamModel(String orgId, String model) {
    if (upstream.isEmpty()) {
      return Optional.empty();
    }
    return catalog
        .find(orgId, model)
        .filter(entry -> entry.engine().callsOut())
        .map(ModelCatalog.Entry::engineModel);
  }

  Optional<UpstreamFineTuning> upstream() {
    return upstream;
  }

  Duration upstreamPoll() {
    return options.upstreamPoll();
  }

  LoraTrainer trainer() {
    LoraTrainer started = trainer;
    if (started == null) {
      synchronized (this) {
        if (trainer == null) {
          trainer = new LoraTrainer(TorchRuntime.engine(options.torchCache()));
        }
        started = trainer;
      }
    }
    return started;
  }

  TrainingSettings settings(Organization org) {
    return TrainingSettings.of(configs, org);
  }

  public FineTuningJobs jobs() {
    return jobs;
  }

  public TrainingFiles files() {
    return files;
  }

  InstanceServices storage() {
    return storage;
  }

  ModelUploads uploads() {
    return uploads;
  }

  FineTuningMetrics metrics() {
    return metrics;
  }

  void wake() {
    runner.wake();
  }

  /** The runner's lease renewal, a job of the module's. */
  Job leaseRenewal() {
    return runner.leaseRenewal();
  }

  @Override
  public void close() {
    runner.close();
  }
}
