package io.engram.finetuning;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Files, jobs, events and checkpoints in OpenAI's shapes (times in Unix seconds). */
final class FineTuningViews {
  private FineTuningViews() {}

  static Map<String, Object> file(TrainingFile file) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("id", file.id());
    view.put("object", "file");
    view.put("bytes", file.bytes());
    view.put("created_at", file.createdAt().getEpochSecond());
    view.put("expires_at", null);
    view.put("filename", file.filename());
    view.put("purpose", file.purpose());
    view.put("status", file.status());
    JsonNode problems = file.problems() == null ? null : Json.read(file.problems(), JsonNode.class);
    view.put(
        "status_details", problems == null ? null : problems.path("summary").asText());
    Map<String, Object> validation = new LinkedHashMap<>();
    validation.put("examples", file.examples());
    validation.put(
        "problem_count", problems == null ? 0 : problems.path("count").asInt());
    validation.put("problems", problems == null ? List.of() : problems.path("lines"));
    view.put("validation", validation);
    return view;
  }

  static Map<String, Object> job(FineTuningJob job) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("object", "fine_tuning.job");
    view.put("id", job.id());
    view.put("model", job.model());
    view.put("created_at", job.createdAt().getEpochSecond());
    view.put("finished_at", seconds(job.finishedAt()));
    view.put("fine_tuned_model", job.fineTunedModel());
    view.put("organization_id", job.orgId());
    view.put("result_files", List.of());
    view.put("status", job.status());
    view.put("validation_file", job.validationFile());
    view.put("training_file", job.trainingFile());
    JsonNode hyperparameters = Json.read(job.hyperparameters(), JsonNode.class);
    view.put("hyperparameters", hyperparameters);
    view.put(
        "method",
        Map.of("type", "supervised", "supervised", Map.of("hyperparameters", hyperparameters)));
    view.put("trained_tokens", job.trainedTokens());
    view.put(
        "error",
        job.errorCode() == null
            ? null
            : error(job.errorCode(), job.errorMessage(), job.errorParam()));
    view.put("user_provided_suffix", job.suffix());
    view.put("seed", job.seed());
    view.put("estimated_finish", null);
    view.put("integrations", List.of());
    view.put("metadata", null);
    return view;
  }

  private static Map<String, Object> error(String code, String message, String param) {
    Map<String, Object> error = new LinkedHashMap<>();
    error.put("code", code);
    error.put("message", message);
    error.put("param", param);
    return error;
  }

  static Map<String, Object> event(FineTuningJobs.Event event) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("object", "fine_tuning.job.event");
    view.put("id", event.id());
    view.put("created_at", event.createdAt() / 1000);
    view.put("level", event.level());
    view.put("message", event.message());
    view.put("data", event.data() == null ? null : Json.read(event.data(), JsonNode.class));
    view.put("type", event.type());
    return view;
  }

  static Map<String, Object> checkpoint(FineTuningJob job, FineTuningJobs.Checkpoint checkpoint) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("object", "fine_tuning.job.checkpoint");
    view.put("id", checkpoint.id());
    view.put("created_at", checkpoint.createdAt() / 1000);
    view.put(
        "fine_tuned_model_checkpoint",
        (job.fineTunedModel() == null ? job.model() : job.fineTunedModel()) + ":ckpt-step-"
            + checkpoint.step());
    view.put("step_number", checkpoint.step());
    view.put("metrics", Json.read(checkpoint.metrics(), JsonNode.class));
    view.put("fine_tuning_job_id", checkpoint.jobId());
    return view;
  }

  /** A page as OpenAI lists: data, has_more, and the first and last ids. */
  static Map<String, Object> page(List<Map<String, Object>> data, boolean hasMore) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("object", "list");
    view.put("data", data);
    view.put("has_more", hasMore);
    view.put("first_id", data.isEmpty() ? null : data.getFirst().get("id"));
    view.put("last_id", data.isEmpty() ? null : data.getLast().get("id"));
    return view;
  }

  private static Long seconds(Instant instant) {
    return instant == null ? null : instant.getEpochSecond();
  }
}
