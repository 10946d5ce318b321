package io.engram.finetuning;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.finetuning.trainer.VaultFact;
import io.engram.inference.local.TinyModel;
import io.engram.support.Http;
import io.engram.support.MultipartForm;
import io.engram.support.TestServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Fine-tuning through the real HTTP boundary: a training file teaches the tiny model a fact, the
 * job trains with the local trainer (loss down by more than half), and the fine-tuned model,
 * listed for its organization only, answers the fact with greedy decoding while the base model
 * does not. Bad files, models, hyperparameters and permissions are refused clearly.
 */
class FineTuningTest {
  static final String ANSWER = VaultFact.ANSWER;
  static final List<String> QUESTIONS = VaultFact.QUESTIONS;

  static TestServer server;
  static String orgId;
  static String key;
  static String otherKey;

  @BeforeAll
  static void start() throws Exception {
    Path models = Files.createTempDirectory("engram-ft-models");
    TinyModel.write(models, 7);
    server = TestServer.builder()
        .env("MODEL_CACHE_DIR", models.toString())
        .env("WORKER_PROCESSES", "1")
        .env("CHECKPOINT_INTERVAL", "8")
        .env("GRADIENT_ACCUMULATION_STEPS", "1")
        .start();
    orgId = server.createOrganization("scale");
    key = server.apiKey(orgId, 10_000, "training", "inference", "models");
    otherKey = server.apiKey(server.createOrganization("scale"), 10_000, "admin");
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  static String factFile(int repeats) {
    StringBuilder lines = new StringBuilder();
    for (int r = 0; r < repeats; r++) {
      for (String question : QUESTIONS) {
        lines
            .append("{\"messages\":[{\"role\":\"user\",\"content\":\"")
            .append(question)
            .append("\"},{\"role\":\"assistant\",\"content\":\"")
            .append(ANSWER)
            .append("\"}]}\n");
      }
    }
    return lines.toString();
  }

  static Http.Response upload(String bearer, String content, String purpose) {
    return upload(server, bearer, content, purpose);
  }

  static Http.Response upload(TestServer on, String bearer, String content, String purpose) {
    MultipartForm form =
        new MultipartForm().file("file", "train.jsonl", content.getBytes(StandardCharsets.UTF_8));
    if (purpose != null) {
      form.field("purpose", purpose);
    }
    return on.http
        .post("/v1/files")
        .bearer(bearer)
        .bytes(form.contentType(), form.bytes())
        .send();
  }

  static Http.Response createJob(String bearer, String json) {
    return server.http.post("/v1/fine-tuning/jobs").bearer(bearer).json(json).send();
  }

  static JsonNode waitFor(String jobId, Predicate<JsonNode> done, Duration timeout)
      throws InterruptedException {
    long until = System.nanoTime() + timeout.toNanos();
    JsonNode job;
    do {
      job = server.http.get("/v1/fine-tuning/jobs/" + jobId).bearer(key).send().json();
      if (done.test(job)) {
        return job;
      }
      Thread.sleep(200);
    } while (System.nanoTime() < until);
    throw new AssertionError("job did not get there in " + timeout + ": " + job);
  }

  static String greedy(String model, String question) {
    Http.Response reply = server
        .http
        .post("/v1/chat/completions")
        .bearer(key)
        .json("{\"model\":\"" + model + "\",\"messages\":[{\"role\":\"user\",\"content\":\""
            + question + "\"}],\"temperature\":0,\"max_tokens\":24,\"memory\":false}")
        .send();
    assertThat(reply.status()).as(reply.text()).isEqualTo(200);
    return reply.json().at("/choices/0/message/content").asText().strip();
  }

  @Test
  void aJobTeachesAFactThatTheFineTunedModelThenAnswers() throws Exception {
    Http.Response file = upload(key, factFile(4), "fine-tune");
    assertThat(file.status()).as(file.text()).isEqualTo(200);
    assertThat(file.json().get("status").asText()).isEqualTo("processed");
    assertThat(file.json().at("/validation/examples").asInt()).isEqualTo(32);
    String fileId = file.json().get("id").asText();

    Http.Response created = createJob(
        key,
        "{\"model\":\"" + TinyModel.ID
            + "\",\"training_file\":\"" + fileId + "\",\"suffix\":\"vault\",\"seed\":42,"
            + "\"hyperparameters\":{\"n_epochs\":8,\"batch_size\":4,\"learning_rate\":0.01}}");
    assertThat(created.status()).as(created.text()).isEqualTo(200);
    assertThat(created.json().get("status").asText()).isIn("validating_files", "queued", "running");
    String jobId = created.json().get("id").asText();

    JsonNode job = waitFor(
        jobId,
        j -> j.get("status").asText().matches("succeeded|failed|cancelled"),
        Duration.ofMinutes(3));
    assertThat(job.get("status").asText()).as(job.toString()).isEqualTo("succeeded");
    String model = job.get("fine_tuned_model").asText();
    assertThat(model).startsWith("ft:" + TinyModel.ID + ":vault:");
    assertThat(job.get("trained_tokens").asLong()).isPositive();
    assertThat(job.at("/hyperparameters/n_epochs").asInt()).isEqualTo(8);

    List<Double> losses = new ArrayList<>();
    JsonNode events = server
        .http
        .get("/v1/fine-tuning/jobs/" + jobId + "/events?limit=1000")
        .bearer(key)
        .send()
        .json();
    for (JsonNode event : events.get("data")) {
      if (event.get("type").asText().equals("metrics")) {
        losses.add(0, event.at("/data/train_loss").asDouble());
      }
    }
    assertThat(losses).hasSizeGreaterThan(10);
    assertThat(losses.getLast()).as("losses %s", losses).isLessThan(losses.getFirst() / 2);
    JsonNode checkpoints = server
        .http
        .get("/v1/fine-tuning/jobs/" + jobId + "/checkpoints")
        .bearer(key)
        .send()
        .json();
    assertThat(checkpoints.get("data")).isNotEmpty();
    assertThat(checkpoints.at("/data/0/step_number").asInt()).isEqualTo(64);

    assertThat(greedy(model, "What is the vault code?")).isEqualTo(ANSWER);
    assertThat(greedy(TinyModel.ID, "What is the vault code?")).doesNotContain("7431");

    JsonNode listed = server.http.get("/v1/models").bearer(key).send().json();
    assertThat(listed.findValuesAsText("id")).contains(model);
    assertThat(server.http.get("/v1/models").bearer(otherKey).send().json().findValuesAsText("id"))
        .doesNotContain(model);
    assertThat(server
            .http
            .get("/v1/fine-tuning/jobs/" + jobId)
            .bearer(otherKey)
            .send()
            .status())
        .isEqualTo(404);
    assertThat(server.http.get("/v1/files/" + fileId).bearer(otherKey).send().status())
        .isEqualTo(404);

    JsonNode usage = storageUsage();
    assertThat(usage.get("lora_adapters_count").asInt()).isEqualTo(1);
    Http.Response deleted =
        server.http.delete("/v1/models/" + model).bearer(key).send();
    assertThat(deleted.status()).as(deleted.text()).isEqualTo(200);
    assertThat(deleted.json().get("deleted").asBoolean()).isTrue();
    assertThat(storageUsage().get("lora_adapters_count").asInt()).isZero();
    assertThat(server
            .http
            .post("/v1/chat/completions")
            .bearer(key)
            .json("{\"model\":\"" + model + "\",\"messages\":[{\"role\":\"user\",\"content\":"
                + "\"hi\"}],\"memory\":false}")
            .send()
            .status())
        .isEqualTo(404);
  }

  private static JsonNode storageUsage() {
    return server
        .asOperator(server.http.get("/v1/organizations/" + orgId + "/storage"))
        .json();
  }

  @Test
  void everyBadLineOfAFileIsReportedWithItsNumberAndReason() {
    String content = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
        + "{\"role\":\"assistant\",\"content\":\"hello\"}]}\n"
        + "not json\n"
        + "{\"messages\":[{\"role\":\"robot\",\"content\":\"x\"}]}\n"
        + "{\"messages\":[{\"role\":\"user\",\"content\":\"only a question\"}]}\n";
    Http.Response file = upload(key, content, "fine-tune");
    assertThat(file.status()).as(file.text()).isEqualTo(200);
    assertThat(file.json().get("status").asText()).isEqualTo("error");
    JsonNode problems = file.json().at("/validation/problems");
    assertThat(problems.findValuesAsText("line")).containsExactly("2", "3", "4");
    assertThat(problems.get(0).get("reason").asText()).contains("not valid JSON");
    assertThat(problems.get(1).get("reason").asText()).contains("robot");
    assertThat(problems.get(2).get("reason").asText()).contains("no assistant message");

    Http.Response job = createJob(
        key,
        "{\"model\":\"" + TinyModel.ID + "\",\"training_file\":\""
            + file.json().get("id").asText() + "\"}");
    assertThat(job.status()).as(job.text()).isEqualTo(400);
    assertThat(job.json().at("/error/code").asText()).isEqualTo("invalid_training_file");
    assertThat(job.json().at("/error/message").asText()).contains("line 2", "line 3", "line 4");
  }

  @Test
  void badRequestsAreRefusedClearly() {
    String fileId = upload(key, factFile(1), "fine-tune").json().get("id").asText();
    Http.Response purpose = upload(key, factFile(1), "assistants");
    assertThat(purpose.status()).isEqualTo(400);
    assertThat(purpose.json().at("/error/param").asText()).isEqualTo("purpose");

    Http.Response cut = server
        .http
        .post("/v1/files")
        .bearer(key)
        .bytes(
            "multipart/form-data; boundary=xyz",
            ("--xyz\r\nContent-Disposition: form-data;"
                    + " name=\"file\"; filename=\"a.jsonl\"\r\n\r\n{\"messages\":")
                .getBytes(StandardCharsets.UTF_8))
        .send();
    assertThat(cut.status()).as(cut.text()).isEqualTo(400);
    Http.Response noBody = server.http.post("/v1/files").bearer(key).json("{}").send();
    assertThat(noBody.status()).as(noBody.text()).isIn(400, 415);

    Http.Response unknownModel =
        createJob(key, "{\"model\":\"no-such-model\",\"training_file\":\"" + fileId + "\"}");
    assertThat(unknownModel.status()).isEqualTo(404);
    assertThat(unknownModel.json().at("/error/param").asText()).isEqualTo("model");

    Http.Response epochs = createJob(
        key,
        "{\"model\":\"" + TinyModel.ID + "\",\"training_file\":\"" + fileId
            + "\",\"hyperparameters\":{\"n_epochs\":0}}");
    assertThat(epochs.status()).isEqualTo(400);
    assertThat(epochs.json().at("/error/param").asText()).isEqualTo("hyperparameters.n_epochs");
    Http.Response rate = createJob(
        key,
        "{\"model\":\"" + TinyModel.ID + "\",\"training_file\":\"" + fileId
            + "\",\"hyperparameters\":{\"learning_rate\":-1}}");
    assertThat(rate.json().at("/error/param").asText()).isEqualTo("hyperparameters.learning_rate");
    Http.Response rank = createJob(
        key,
        "{\"model\":\"" + TinyModel.ID + "\",\"training_file\":\"" + fileId
            + "\",\"hyperparameters\":{\"lora\":{\"rank\":0}}}");
    assertThat(rank.status()).isEqualTo(400);
    assertThat(rank.json().at("/error/param").asText()).isEqualTo("hyperparameters.lora.rank");

    Http.Response othersFile = createJob(
        otherKey, "{\"model\":\"" + TinyModel.ID + "\",\"training_file\":\"" + fileId + "\"}");
    assertThat(othersFile.status()).isEqualTo(404);
    assertThat(othersFile.json().at("/error/param").asText()).isEqualTo("training_file");

    String inferenceOnly = server.apiKey(orgId, 1000, "inference");
    assertThat(createJob(
                inferenceOnly,
                "{\"model\":\"" + TinyModel.ID + "\",\"training_file\":\"" + fileId + "\"}")
            .status())
        .isEqualTo(403);
    assertThat(upload(inferenceOnly, factFile(1), "fine-tune").status()).isEqualTo(403);
  }

  @Test
  void trainingDisabledForTheOrganizationRefusesNewJobs() {
    String org = server.createOrganization("scale");
    String admin = server.apiKey(org, 1000, "admin");
    Http.Response set = server
        .http
        .post("/v1/organizations/" + org + "/env")
        .bearer(admin)
        .json("{\"variables\":{\"TRAINING_ENABLED\":\"false\"}}")
        .send();
    assertThat(set.status()).as(set.text()).isEqualTo(200);
    String fileId = upload(admin, factFile(1), "fine-tune").json().get("id").asText();
    Http.Response job = createJob(
        admin, "{\"model\":\"" + TinyModel.ID + "\",\"training_file\":\"" + fileId + "\"}");
    assertThat(job.status()).as(job.text()).isEqualTo(403);
    assertThat(job.json().at("/error/code").asText()).isEqualTo("training_disabled");
  }

  @Test
  void aCancelledJobStopsWithinAStepAndKeepsItsCheckpoints() throws Exception {
    String fileId = upload(key, factFile(4), "fine-tune").json().get("id").asText();
    String jobId = createJob(
            key,
            "{\"model\":\"" + TinyModel.ID + "\",\"training_file\":\"" + fileId
                + "\",\"hyperparameters\":{\"n_epochs\":50,\"batch_size\":1}}")
        .json()
        .get("id")
        .asText();
    waitFor(
        jobId,
        j -> server
                .http
                .get("/v1/fine-tuning/jobs/" + jobId + "/checkpoints")
                .bearer(key)
                .send()
                .json()
                .get("data")
                .size()
            > 0,
        Duration.ofMinutes(2));
    Http.Response cancelled = server
        .http
        .post("/v1/fine-tuning/jobs/" + jobId + "/cancel")
        .bearer(key)
        .send();
    assertThat(cancelled.status()).as(cancelled.text()).isEqualTo(200);
    JsonNode job =
        waitFor(jobId, j -> j.get("status").asText().equals("cancelled"), Duration.ofSeconds(20));
    assertThat(job.get("fine_tuned_model").isNull()).isTrue();
    JsonNode checkpoints = server
        .http
        .get("/v1/fine-tuning/jobs/" + jobId + "/checkpoints")
        .bearer(key)
        .send()
        .json();
    assertThat(checkpoints.get("data")).isNotEmpty();
    assertThat(server
            .http
            .post("/v1/fine-tuning/jobs/" + jobId + "/cancel")
            .bearer(key)
            .send()
            .status())
        .isEqualTo(409);
    assertThat(server.http.delete("/v1/files/" + fileId).bearer(key).send().status())
        .isEqualTo(200);
    assertThat(server.http.get("/v1/files/" + fileId).bearer(key).send().status())
        .isEqualTo(404);
  }
}
