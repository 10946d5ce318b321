package io.engram.finetuning;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.access.Access;
import io.engram.access.Permission;
import io.engram.access.Principal;
import io.engram.access.Requires;
import io.engram.finetuning.trainer.LlamaShape;
import io.engram.instances.files.FileStore;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.FileBody;
import io.engram.platform.http.HttpServer;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.QueryParams;
import io.engram.platform.http.RefusedBody;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.engram.platform.json.Json;
import io.javalin.http.Context;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * OpenAI's files and fine-tuning routes: {@code /v1/files} (purpose fine-tune) and
 * {@code /v1/fine-tuning/jobs} with cancel, events and checkpoints. An API key with
 * {@code training} (or admin); another organization's file or job answers 404.
 */
public final class FineTuningRoutes implements RouteModule {
  static final String FILES = "/v1/files";
  static final String JOBS = "/v1/fine-tuning/jobs";
  static final String OPENAI_JOBS = "/v1/fine_tuning/jobs";
  private static final Pattern SUFFIX = Pattern.compile("[A-Za-z0-9_-]{1,40}");
  private static final Set<String> JOB_FIELDS = Set.of(
      "model",
      "training_file",
      "validation_file",
      "hyperparameters",
      "suffix",
      "seed",
      "method",
      "metadata",
      "integrations");
  private static final SecureRandom SEEDS = new SecureRandom();

  private final FineTuning fineTuning;
  private final long maxBodyBytes;

  public FineTuningRoutes(FineTuning fineTuning, long maxBodyBytes) {
    this.fineTuning = fineTuning;
    this.maxBodyBytes = maxBodyBytes;
  }

  /**
   * The spec writes {@code /fine-tuning/jobs}; OpenAI (and its clients) {@code /fine_tuning/jobs}.
   * Both are served, the same routes.
   */
  @Override
  public void register(Routes routes) {
    routes
        .post(FILES, Requires.permission(Permission.TRAINING), this::upload)
        .get(FILES, Requires.permission(Permission.TRAINING), this::listFiles)
        .get(
            FILES + "/{file_id}",
            Requires.permission(Permission.TRAINING),
            ctx -> Responses.json(ctx, FineTuningViews.file(file(ctx))))
        .get(FILES + "/{file_id}/content", Requires.permission(Permission.TRAINING), this::content)
        .delete(FILES + "/{file_id}", Requires.permission(Permission.TRAINING), this::deleteFile);
    for (String jobs : List.of(JOBS, OPENAI_JOBS)) {
      routes
          .post(jobs, Requires.permission(Permission.TRAINING), this::create)
          .get(jobs, Requires.permission(Permission.TRAINING), this::listJobs)
          .get(
              jobs + "/{fine_tuning_job_id}",
              Requires.permission(Permission.TRAINING),
              ctx -> Responses.json(ctx, FineTuningViews.job(job(ctx))))
          .post(
              jobs + "/{fine_tuning_job_id}/cancel",
              Requires.permission(Permission.TRAINING),
              this::cancel)
          .get(
              jobs + "/{fine_tuning_job_id}/events",
              Requires.permission(Permission.TRAINING),
              this::events)
          .get(
              jobs + "/{fine_tuning_job_id}/checkpoints",
              Requires.permission(Permission.TRAINING),
              this::checkpoints);
    }
  }

  private Principal caller(Context ctx) {
    return Access.caller(ctx);
  }

  private static FileStore.Actor actor(Context ctx, Principal caller) {
    return new FileStore.Actor(caller.credentialId(), HttpServer.requestId(ctx));
  }

  private void upload(Context ctx) throws IOException {
    TrainingFile file;
    try {
      Principal caller = caller(ctx);
      try (InputStream body = ctx.req().getInputStream()) {
        file = fineTuning
            .files()
            .upload(caller.organization(), ctx.contentType(), body, actor(ctx, caller));
      }
    } catch (ApiException e) {
      RefusedBody.discard(ctx, true);
      throw e;
    }
    Responses.json(ctx, FineTuningViews.file(file));
  }

  private TrainingFile file(Context ctx) {
    return fineTuning.files().get(caller(ctx).orgId(), ctx.pathParam("file_id"), "file_id");
  }

  private void listFiles(Context ctx) {
    Principal caller = caller(ctx);
    String purpose = ctx.queryParam("purpose");
    if (purpose != null && !purpose.equals(TrainingFile.PURPOSE)) {
      Responses.json(ctx, FineTuningViews.page(List.of(), false));
      return;
    }
    String order = ctx.queryParam("order");
    if (order != null && !order.equals("asc") && !order.equals("desc")) {
      throw ApiException.badRequest("order", "'order' is 'asc' or 'desc'");
    }
    int limit = QueryParams.integer(ctx, "limit", 10_000, 1, 10_000);
    String after = ctx.queryParam("after");
    if (after != null) {
      fineTuning.files().get(caller.orgId(), after, "after");
    }
    List<TrainingFile> page =
        fineTuning.files().list(caller.orgId(), after, limit + 1, "asc".equals(order));
    Responses.json(
        ctx,
        FineTuningViews.page(
            page.stream().limit(limit).map(FineTuningViews::file).toList(), page.size() > limit));
  }

  private void content(Context ctx) throws IOException {
    Path bytes = fineTuning.files().content(file(ctx));
    long length = Files.size(bytes);
    ctx.contentType("application/octet-stream");
    ctx.header("Content-Length", String.valueOf(length));
    FileBody.send(ctx, bytes, 0, length);
  }

  private void deleteFile(Context ctx) {
    Principal caller = caller(ctx);
    TrainingFile file = fineTuning.files().get(caller.orgId(), ctx.pathParam("file_id"), "file_id");
    if (fineTuning.jobs().fileInUse(caller.orgId(), file.id())) {
      throw ApiException.conflict(
          "file_in_use",
          "file_id",
          "A fine-tuning job that has not finished reads this file; cancel it first");
    }
    fineTuning.files().delete(caller.organization(), file, actor(ctx, caller));
    Responses.json(ctx, Map.of("id", file.id(), "object", "file", "deleted", true));
  }

  private void create(Context ctx) {
    Principal caller = caller(ctx);
    JsonBody body = JsonBody.parse(ctx, maxBodyBytes).allowOnly(JOB_FIELDS);
    if (!fineTuning.settings(caller.organization()).enabled()) {
      throw ApiException.forbidden(
          "training_disabled",
          "Fine-tuning is turned off for this organization (TRAINING_ENABLED=false)");
    }
    String model = body.requiredString("model", 200);
    String trainingId = body.requiredString("training_file", 100);
    String validationId = body.optionalString("validation_file", 100).orElse(null);
    String suffix = body.optionalString("suffix", 40).orElse(null);
    if (suffix != null && !SUFFIX.matcher(suffix).matches()) {
      throw ApiException.badRequest("suffix", "'suffix' is 1 to 40 letters, digits, '-' or '_'");
    }
    long seed = body.has("seed") && !body.get("seed").isNull()
        ? body.optionalInt("seed", 0, Integer.MAX_VALUE).orElseThrow()
        : SEEDS.nextInt(Integer.MAX_VALUE);
    Hyperparameters hyperparameters = Hyperparameters.parse(hyperparameters(body));
    JsonNode integrations = body.get("integrations");
    if (integrations != null
        && !integrations.isNull()
        && !(integrations.isArray() && integrations.isEmpty())) {
      throw ApiException.badRequest("integrations", "Integrations are not supported");
    }
    String trainer = trainer(caller, model);
    requireUsable(caller, trainingId, "training_file");
    if (validationId != null) {
      requireUsable(caller, validationId, "validation_file");
    }
    FineTuningJob job = fineTuning
        .jobs()
        .create(
            caller.orgId(),
            fineTuning.files().get(caller.orgId(), trainingId, "training_file").instanceId(),
            model,
            trainingId,
            validationId,
            Json.write(hyperparameters.view()),
            suffix,
            seed,
            trainer,
            caller.credentialId());
    fineTuning.wake();
    Responses.json(ctx, FineTuningViews.job(job));
  }

  /**
   * Where the job trains: a local Llama-architecture model on this server's trainer, a model the
   * upstream serves on the upstream's fine-tuning API (when the operator turned that on).
   */
  private String trainer(Principal caller, String model) {
    var local = fineTuning.baseModelDir(caller.orgId(), model);
    if (local.isPresent()) {
      try {
        LlamaShape.read(local.get());
      } catch (IOException e) {
        throw ApiException.invalid(
            "model_not_trainable",
            "model",
            "The model '" + model + "' cannot be fine-tuned here: " + e.getMessage());
      }
      return FineTuningJob.LOCAL;
    }
    if (fineTuning.upstreamModel(caller.orgId(), model).isPresent()) {
      return FineTuningJob.UPSTREAM;
    }
    throw ApiException.notFound(
        "model_not_found",
        "model",
        "The model '" + model
            + "' does not exist or is not a model this server can fine-tune (a local"
            + " Llama-architecture model, or an upstream model when ENGRAM_FINE_TUNING_UPSTREAM is on)");
  }

  /** OpenAI's two places for them: top-level, or under {@code method.supervised}. */
  private static JsonNode hyperparameters(JsonBody body) {
    JsonNode method = body.get("method");
    if (method == null || method.isNull()) {
      return body.get("hyperparameters");
    }
    if (!method.path("type").asText("supervised").equals("supervised")) {
      throw ApiException.badRequest(
          "method.type", "Only supervised fine-tuning is supported ('method.type': 'supervised')");
    }
    if (body.has("hyperparameters")) {
      throw ApiException.badRequest(
          "hyperparameters",
          "Send hyperparameters either at the top level or under 'method', not both");
    }
    return method.path("supervised").get("hyperparameters");
  }

  private void requireUsable(Principal caller, String fileId, String param) {
    TrainingFile file = fineTuning.files().get(caller.orgId(), fileId, param);
    if (!file.status().equals(TrainingFile.PROCESSED)) {
      JsonNode problems = Json.read(file.problems(), JsonNode.class);
      throw ApiException.invalid(
          "invalid_" + param,
          param,
          "The file " + fileId + " cannot be trained on: "
              + problems.path("summary").asText());
    }
  }

  private FineTuningJob job(Context ctx) {
    return fineTuning.jobs().get(caller(ctx).orgId(), ctx.pathParam("fine_tuning_job_id"));
  }

  private void listJobs(Context ctx) {
    Principal caller = caller(ctx);
    int limit = QueryParams.integer(ctx, "limit", 20, 1, 100);
    String after = ctx.queryParam("after");
    if (after != null) {
      fineTuning.jobs().get(caller.orgId(), after);
    }
    List<FineTuningJob> page = fineTuning.jobs().list(caller.orgId(), after, limit + 1);
    Responses.json(
        ctx,
        FineTuningViews.page(
            page.stream().limit(limit).map(FineTuningViews::job).toList(), page.size() > limit));
  }

  private void cancel(Context ctx) {
    FineTuningJob job = job(ctx);
    if (!fineTuning.jobs().requestCancel(job.id())) {
      throw ApiException.conflict(
          "job_finished",
          "fine_tuning_job_id",
          "The job has already " + job.status() + "; only a job that has not finished can be"
              + " cancelled");
    }
    Responses.json(ctx, FineTuningViews.job(fineTuning.jobs().get(job.orgId(), job.id())));
  }

  private void events(Context ctx) {
    FineTuningJob job = job(ctx);
    int limit = QueryParams.integer(ctx, "limit", 20, 1, 1000);
    List<FineTuningJobs.Event> page =
        fineTuning.jobs().events(job.id(), ctx.queryParam("after"), limit + 1);
    Responses.json(
        ctx,
        FineTuningViews.page(
            page.stream().limit(limit).map(FineTuningViews::event).toList(), page.size() > limit));
  }

  private void checkpoints(Context ctx) {
    FineTuningJob job = job(ctx);
    int limit = QueryParams.integer(ctx, "limit", 10, 1, 100);
    List<FineTuningJobs.Checkpoint> page =
        fineTuning.jobs().checkpoints(job.id(), ctx.queryParam("after"), limit + 1);
    Responses.json(
        ctx,
        FineTuningViews.page(
            page.stream()
                .limit(limit)
                .map(c -> FineTuningViews.checkpoint(job, c))
                .toList(),
            page.size() > limit));
  }
}
