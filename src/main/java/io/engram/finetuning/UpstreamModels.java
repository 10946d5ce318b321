package io.engram.finetuning;

import io.engram.inference.models.ModelCard;
import io.engram.inference.models.ModelCatalog;
import io.engram.inference.remote.RemoteEngine;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The models the upstream fine-tuned for organizations: each is its organization's only, listed
 * under the upstream's name and served by the upstream. Deleting one deletes it upstream too.
 */
final class UpstreamModels implements ModelCatalog.OrganizationModels {
  private static final Logger LOG = LoggerFactory.getLogger(UpstreamModels.class);

  private final FineTuningJobs jobs;
  private final UpstreamFineTuning upstream;
  private final URI baseUrl;
  private final String apiKey;
  private final Duration timeout;
  private final int contextLength;
  private final Map<String, ModelCatalog.Entry> known = new ConcurrentHashMap<>();

  UpstreamModels(
      FineTuningJobs jobs,
      UpstreamFineTuning upstream,
      URI baseUrl,
      String apiKey,
      Duration timeout,
      int contextLength) {
    this.jobs = jobs;
    this.upstream = upstream;
    this.baseUrl = baseUrl;
    this.apiKey = apiKey;
    this.timeout = timeout;
    this.contextLength = contextLength;
  }

  @Override
  public Optional<ModelCatalog.Entry> loaded(String orgId, String id) {
    return Optional.ofNullable(known.get(orgId + "/" + id));
  }

  @Override
  public Optional<ModelCatalog.Entry> find(String orgId, String id) {
    return loaded(orgId, id)
        .or(() -> jobs.byModel(orgId, id)
            .filter(job -> job.trainer().equals(FineTuningJob.UPSTREAM))
            .filter(job -> job.status().equals(FineTuningJob.SUCCEEDED))
            .map(this::entry));
  }

  @Override
  public List<ModelCatalog.Entry> all(String orgId) {
    return jobs.upstreamModels(orgId).stream().map(this::entry).toList();
  }

  private ModelCatalog.Entry entry(FineTuningJob job) {
    String model = job.fineTunedModel();
    return known.computeIfAbsent(
        job.orgId() + "/" + model,
        key -> new ModelCatalog.Entry(
            new ModelCard(
                model,
                job.finishedAt() == null
                    ? job.createdAt().getEpochSecond()
                    : job.finishedAt().getEpochSecond(),
                job.orgId(),
                contextLength,
                null),
            new RemoteEngine(baseUrl, apiKey, model, timeout),
            model));
  }

  @Override
  public boolean delete(String orgId, String id) {
    Optional<FineTuningJob> job =
        jobs.byModel(orgId, id).filter(found -> found.trainer().equals(FineTuningJob.UPSTREAM));
    if (job.isEmpty()) {
      return false;
    }
    try {
      upstream.on(orgId).deleteModel(id);
    } catch (IOException e) {
      LOG.warn("fine-tuning: the upstream did not delete model {}: {}", id, e.getMessage());
    }
    jobs.modelDeleted(job.get().id());
    ModelCatalog.Entry served = known.remove(orgId + "/" + id);
    if (served != null && served.engine() instanceof RemoteEngine engine) {
      // Its idle connections close now; one still answering a request finishes, then closes.
      engine.close();
    }
    return true;
  }
}
