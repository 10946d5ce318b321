package io.engram.finetuning;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.finetuning.trainer.AdapterMerge;
import io.engram.finetuning.trainer.ChatTokenizer;
import io.engram.finetuning.trainer.Checkpoints;
import io.engram.finetuning.trainer.LlamaShape;
import io.engram.finetuning.trainer.LoraTrainer;
import io.engram.finetuning.trainer.PeftAdapter;
import io.engram.instances.files.FileStore;
import io.engram.instances.storage.StoragePath;
import io.engram.organizations.Organization;
import io.engram.platform.http.ApiException;
import io.engram.platform.io.DirectoryTree;
import io.engram.platform.json.Json;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.OptionalLong;
import java.util.function.BooleanSupplier;

/**
 * One job on the local trainer: its files read and tokenized for the base model (every example
 * too long for the model's context reported by line), LoRA training with checkpoints under the
 * instance's job folder, then the adapter kept in the instance's storage
 * ({@code lora_adapters/<job id>/}, PEFT layout, counted as an adapter) and merged into a model
 * the organization is served.
 */
final class LocalTrainingRun {
  /** Why a job cannot go on; the code and param as the job's error shows them. */
  static final class JobFailure extends Exception {
    final String code;
    final String param;

    JobFailure(String code, String param, String message) {
      super(message);
      this.code = code;
      this.param = param;
    }
  }

  /** What a run ended with. */
  record Result(boolean finished, long trainedTokens, String fineTunedModel) {}

  private final FineTuning context;
  private final FineTuningJob job;
  private final Organization org;
  private final BooleanSupplier stop;

  LocalTrainingRun(FineTuning context, FineTuningJob job, Organization org, BooleanSupplier stop) {
    this.context = context;
    this.job = job;
    this.org = org;
    this.stop = stop;
  }

  Result run() throws JobFailure, IOException {
    Path baseModel = context
        .baseModelDir(org.id(), job.model())
        .orElseThrow(() -> new JobFailure(
            "model_not_available",
            "model",
            "The base model '" + job.model() + "' is no longer available"));
    ChatTokenizer tokenizer;
    int contextLength;
    try {
      tokenizer = new ChatTokenizer(baseModel);
      contextLength = LlamaShape.read(baseModel).context();
    } catch (LlamaShape.UnsupportedModelException e) {
      throw new JobFailure("unsupported_model", "model", e.getMessage());
    }
    List<ChatTokenizer.Example> training =
        examples(job.trainingFile(), "training_file", tokenizer, contextLength);
    List<ChatTokenizer.Example> validation = job.validationFile() == null
        ? List.of()
        : examples(job.validationFile(), "validation_file", tokenizer, contextLength);
    TrainingSettings settings = context.settings(org);
    Hyperparameters resolved = Hyperparameters.stored(job.hyperparameters())
        .resolve(training.size(), settings.batchSize());
    context.jobs().resolved(job.id(), Json.write(resolved.view()));
    if (job.status().equals(FineTuningJob.VALIDATING)) {
      context
          .jobs()
          .message(
              job.id(),
              "Files validated: " + training.size() + " training examples"
                  + (validation.isEmpty() ? "" : ", " + validation.size() + " validation examples")
                  + "; moving job to queued state");
      context.jobs().moveTo(job.id(), FineTuningJob.QUEUED);
    }
    context.jobs().moveTo(job.id(), FineTuningJob.RUNNING);
    LoraTrainer.Plan plan = new LoraTrainer.Plan(
        resolved.epochs(),
        resolved.batchSize(),
        settings.accumulation(),
        resolved.learningRate(),
        0.0,
        settings.checkpointInterval(),
        job.seed(),
        resolved.lora());
    int total = LoraTrainer.totalSteps(plan, training.size());
    context
        .jobs()
        .message(
            job.id(),
            String.format(
                Locale.ROOT,
                "Fine-tuning job started: %d steps (%d epochs, batch %d x %d accumulated)",
                total,
                plan.epochs(),
                plan.batchSize(),
                plan.accumulation()));
    Path work = context.storage().files().jobDir(job.instanceId(), job.id());
    Checkpoints checkpoints = new Checkpoints(work.resolve("checkpoints"));
    LoraTrainer.Outcome outcome = context
        .trainer()
        .train(
            baseModel, job.model(), training, validation, plan, checkpoints, new Reporter(total));
    if (!outcome.finished()) {
      return new Result(false, outcome.trainedTokens(), null);
    }
    Path adapter = checkpoints
        .latest()
        .orElseThrow(() -> new IOException("the finished run left no checkpoint"));
    String model = modelId();
    keepAdapter(adapter);
    Path staged = context.uploads().newStagingDir();
    AdapterMerge.write(baseModel, adapter, staged);
    context.uploads().installTrained(org.id(), model, staged);
    try {
      DirectoryTree.delete(work);
    } catch (IOException e) {
      // the checkpoints are swept with the instance; nothing depends on them now
    }
    return new Result(true, outcome.trainedTokens(), model);
  }

  /** The file's conversations tokenized; every line that is not a usable example fails the job. */
  private List<ChatTokenizer.Example> examples(
      String fileId, String param, ChatTokenizer tokenizer, int contextLength)
      throws JobFailure, IOException {
    TrainingFile file = file(context, org.id(), fileId, param);
    TrainingFileCheck.Report report = context.files().read(file);
    List<TrainingFileCheck.Problem> problems = new ArrayList<>(report.problems());
    int problemCount = report.problemCount();
    List<ChatTokenizer.Example> examples = new ArrayList<>();
    for (TrainingFileCheck.Conversation conversation : report.conversations()) {
      ChatTokenizer.Example example =
          tokenizer.encode(conversation.messages(), conversation.trained());
      if (example.tokens().length > contextLength) {
        problemCount++;
        problems.add(new TrainingFileCheck.Problem(
            conversation.line(),
            example.tokens().length + " tokens, more than the base model's context of "
                + contextLength));
      } else {
        examples.add(example);
      }
    }
    if (problemCount > 0 || examples.isEmpty()) {
      problems.sort(java.util.Comparator.comparingInt(TrainingFileCheck.Problem::line));
      throw new JobFailure(
          "invalid_" + param,
          param,
          "The file " + fileId + " has "
              + new TrainingFileCheck.Report(
                      examples.isEmpty() ? List.of() : report.conversations(),
                      problems,
                      problemCount)
                  .summary());
    }
    return examples;
  }

  /** A file the job reads; one deleted since the job was created fails the job. */
  static TrainingFile file(FineTuning context, String orgId, String fileId, String param)
      throws JobFailure {
    try {
      return context.files().get(orgId, fileId, param);
    } catch (ApiException e) {
      throw new JobFailure("file_not_found", param, "The file " + fileId + " was deleted");
    }
  }

  /** {@code ft:<base>:<suffix>:<job id>}, the suffix "engram" when the job has none. */
  private String modelId() {
    String suffix = job.suffix() == null ? "engram" : job.suffix();
    String jobPart = job.id().substring("ftjob-".length());
    String base = job.model();
    int room = 128 - ("ft:::" + suffix + jobPart).length();
    return "ft:" + (base.length() > room ? base.substring(0, room) : base) + ":" + suffix + ":"
        + jobPart;
  }

  /** The adapter goes into the instance's storage as an adapter of its own. */
  private void keepAdapter(Path adapter) throws IOException {
    FileStore.Actor actor = new FileStore.Actor(null, job.id());
    for (String name : List.of(PeftAdapter.CONFIG, PeftAdapter.WEIGHTS)) {
      Path file = adapter.resolve(name);
      try (InputStream in = Files.newInputStream(file)) {
        context
            .storage()
            .files()
            .put(
                org,
                job.instanceId(),
                StoragePath.of(FineTuning.adapterFolder(job.id()) + name, "adapter"),
                in,
                OptionalLong.of(Files.size(file)),
                "application/octet-stream",
                actor);
      }
    }
  }

  /** Steps and checkpoints into the job's events; metrics for about a hundred steps of a run. */
  private final class Reporter implements LoraTrainer.Listener {
    private final int every;

    Reporter(int total) {
      this.every = Math.max(1, total / 100);
    }

    @Override
    public void step(LoraTrainer.StepReport report) {
      if (report.step() % every == 0 || report.step() == report.totalSteps()) {
        context
            .jobs()
            .event(
                job.id(),
                "info",
                "metrics",
                String.format(
                    Locale.ROOT,
                    "Step %d/%d: training loss=%.4f",
                    report.step(),
                    report.totalSteps(),
                    report.trainLoss()),
                Json.write(metrics(report)));
      }
      context.metrics().step(report);
    }

    @Override
    public void checkpoint(int step, Checkpoints.Saved saved, LoraTrainer.StepReport report) {
      context.jobs().checkpoint(job.id(), step, Json.write(metrics(report)));
      context.jobs().message(job.id(), "Checkpoint saved at step " + step);
    }

    @Override
    public void resumed(int step) {
      context
          .jobs()
          .event(
              job.id(),
              "info",
              "message",
              "Resumed from the checkpoint at step " + step,
              Json.write(Json.MAPPER.createObjectNode().put("step", step)));
    }

    @Override
    public boolean cancelled() {
      return stop.getAsBoolean();
    }
  }

  static ObjectNode metrics(LoraTrainer.StepReport report) {
    ObjectNode data = Json.MAPPER
        .createObjectNode()
        .put("step", report.step())
        .put("total_steps", report.totalSteps())
        .put("train_loss", report.trainLoss())
        .put("learning_rate", report.learningRate())
        .put("trained_tokens", report.trainedTokens())
        .put("tokens_per_second", Math.round(report.tokensPerSecond()));
    if (report.validationLoss() != null) {
      data.put("valid_loss", report.validationLoss());
    }
    return data;
  }
}
