package io.engram.finetuning;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.organizations.Organization;
import io.engram.platform.json.Json;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One job on the upstream's fine-tuning API: its files uploaded there, the job created there,
 * then mirrored until it ends (status, events, trained tokens); a cancel asked here is sent
 * there. The upstream's fine-tuned model becomes the organization's model, served by the
 * upstream. After a restart the job goes on polling the upstream job it already created.
 */
final class UpstreamTrainingRun {
  private static final Logger LOG = LoggerFactory.getLogger(UpstreamTrainingRun.class);

  private final FineTuning context;
  private final FineTuningJob job;
  private final Organization org;
  private final BooleanSupplier stopping;
  private final BooleanSupplier cancelRequested;
  private final UpstreamFineTuning upstream;
  private String lastEvent;

  UpstreamTrainingRun(
      FineTuning context,
      FineTuningJob job,
      Organization org,
      BooleanSupplier stopping,
      BooleanSupplier cancelRequested) {
    this.context = context;
    this.job = job;
    this.org = org;
    this.stopping = stopping;
    this.cancelRequested = cancelRequested;
    this.upstream = context.upstream().orElseThrow().on(job.orgId());
    this.lastEvent = job.remoteEvent();
  }

  LocalTrainingRun.Result run() throws LocalTrainingRun.JobFailure, InterruptedException {
    String remoteId = job.remoteJobId();
    boolean cancelSent = false;
    String status = job.status();
    while (!stopping.getAsBoolean()) {
      try {
        if (remoteId == null) {
          if (cancelRequested.getAsBoolean()) {
            return new LocalTrainingRun.Result(false, 0, null);
          }
          remoteId = create();
        }
        if (cancelRequested.getAsBoolean() && !cancelSent) {
          cancelSent = true;
          upstream.cancel(remoteId);
        }
        JsonNode remote = upstream.job(remoteId);
        mirrorEvents(remoteId);
        String remoteStatus = remote.path("status").asText();
        long tokens = remote.path("trained_tokens").asLong(0);
        switch (remoteStatus) {
          case FineTuningJob.SUCCEEDED -> {
            String model = remote.path("fine_tuned_model").asText("");
            if (model.isEmpty()) {
              throw new LocalTrainingRun.JobFailure(
                  "upstream_failed",
                  null,
                  "The upstream job " + remoteId + " succeeded without a fine_tuned_model");
            }
            return new LocalTrainingRun.Result(true, tokens, model);
          }
          case FineTuningJob.FAILED -> {
            JsonNode error = remote.path("error");
            throw new LocalTrainingRun.JobFailure(
                error.path("code").asText("upstream_failed"),
                error.path("param").isTextual() ? error.path("param").asText() : null,
                "The upstream job " + remoteId + " failed: "
                    + error.path("message").asText("no reason given"));
          }
          case FineTuningJob.CANCELLED -> {
            return new LocalTrainingRun.Result(false, tokens, null);
          }
          case FineTuningJob.VALIDATING, FineTuningJob.QUEUED, FineTuningJob.RUNNING -> {
            if (!remoteStatus.equals(status)) {
              context.jobs().moveTo(job.id(), remoteStatus);
              status = remoteStatus;
            }
          }
          default ->
            LOG.warn(
                "fine-tuning job {}: the upstream job {} is in an unknown status '{}'",
                job.id(),
                remoteId,
                remoteStatus);
        }
      } catch (UpstreamFineTuning.UpstreamException e) {
        if (e.refused() && remoteId == null) {
          throw new LocalTrainingRun.JobFailure(
              "upstream_refused", null, "The upstream refused the job: " + e.getMessage());
        }
        LOG.warn("fine-tuning job {}: {} (trying again)", job.id(), e.getMessage());
      } catch (IOException e) {
        LOG.warn("fine-tuning job {}: {} (trying again)", job.id(), e.toString());
      }
      Thread.sleep(context.upstreamPoll().toMillis());
    }
    return new LocalTrainingRun.Result(false, 0, null);
  }

  /** Uploads the files and creates the upstream job; its id is kept before anything else happens. */
  private String create() throws IOException, LocalTrainingRun.JobFailure {
    String model = context
        .upstreamModel(org.id(), job.model())
        .orElseThrow(() -> new LocalTrainingRun.JobFailure(
            "model_not_available",
            "model",
            "The base model '" + job.model() + "' is no longer served by the upstream"));
    ObjectNode body = Json.MAPPER.createObjectNode().put("model", model);
    body.put("training_file", upload(job.trainingFile(), "training_file"));
    if (job.validationFile() != null) {
      body.put("validation_file", upload(job.validationFile(), "validation_file"));
    }
    if (job.suffix() != null) {
      body.put("suffix", job.suffix());
    }
    body.put("seed", job.seed());
    Hyperparameters asked = Hyperparameters.stored(job.hyperparameters());
    ObjectNode hyperparameters = body.putObject("hyperparameters");
    if (asked.epochs() != null) {
      hyperparameters.put("n_epochs", asked.epochs());
    }
    if (asked.batchSize() != null) {
      hyperparameters.put("batch_size", asked.batchSize());
    }
    if (asked.learningRate() != null) {
      hyperparameters.put(
          "learning_rate_multiplier", asked.learningRate() / Hyperparameters.BASE_LEARNING_RATE);
    }
    String remoteId = upstream.createJob(body).path("id").asText();
    context.jobs().remoteJob(job.id(), remoteId);
    context
        .jobs()
        .message(
            job.id(),
            "Created the upstream fine-tuning job " + remoteId + " on base model " + model);
    return remoteId;
  }

  private String upload(String fileId, String param)
      throws IOException, LocalTrainingRun.JobFailure {
    TrainingFile file = LocalTrainingRun.file(context, org.id(), fileId, param);
    return upstream.uploadFile(file.filename(), context.files().content(file));
  }

  /** Copies the upstream's events this job has not shown yet, oldest first. */
  private void mirrorEvents(String remoteId) throws IOException {
    List<JsonNode> fresh = new ArrayList<>();
    for (JsonNode event : upstream.events(remoteId).path("data")) {
      if (event.path("id").asText().equals(lastEvent)) {
        break;
      }
      fresh.add(0, event);
    }
    for (JsonNode event : fresh) {
      JsonNode data = event.path("data");
      context
          .jobs()
          .event(
              job.id(),
              event.path("level").asText("info"),
              event.path("type").asText("message"),
              event.path("message").asText(""),
              data.isObject() ? Json.write(data) : null);
      lastEvent = event.path("id").asText();
    }
    if (!fresh.isEmpty()) {
      context.jobs().remoteEventSeen(job.id(), lastEvent);
    }
  }
}
