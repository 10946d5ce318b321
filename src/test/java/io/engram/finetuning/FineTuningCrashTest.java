package io.engram.finetuning;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.inference.local.TinyModel;
import io.engram.support.BesideTheRest;
import io.engram.support.Http;
import io.engram.support.MultipartForm;
import io.engram.support.ServerProcess;
import io.engram.support.TestServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 while a job trains: after the restart the job resumes from its newest checkpoint (its
 * steps go on from there, not from 1), finishes, and its model is served.
 */
@BesideTheRest
class FineTuningCrashTest {
  @TempDir
  Path dataDir;

  @TempDir
  Path models;

  private Map<String, String> env() {
    return Map.of(
        "ENGRAM_DATA_DIR",
        dataDir.toString(),
        "ENGRAM_ADMIN_KEY",
        TestServer.ADMIN_KEY,
        "LOG_FILE_PATH",
        dataDir.resolve("app.log").toString(),
        "MODEL_CACHE_DIR",
        models.toString(),
        "CHECKPOINT_INTERVAL",
        "10",
        "GRADIENT_ACCUMULATION_STEPS",
        "1");
  }

  @Test
  void aJobCutByKillNineResumesFromItsLastCheckpoint() throws Exception {
    TinyModel.write(models, 7);
    String key;
    String jobId;
    int checkpointAtKill;
    try (ServerProcess server =
        ServerProcess.start(env(), "serve").awaitHealthy(Duration.ofSeconds(60))) {
      Http http = server.http();
      String org = http.post("/v1/organizations")
          .bearer(TestServer.ADMIN_KEY)
          .json("{\"name\":\"Crash\",\"plan\":\"scale\"}")
          .send()
          .json()
          .get("id")
          .asText();
      key = http.post("/v1/organizations/" + org + "/api-keys")
          .bearer(TestServer.ADMIN_KEY)
          .json(
              "{\"name\":\"k\",\"permissions\":[\"training\",\"inference\"],\"rate_limit\":100000}")
          .send()
          .json()
          .get("token")
          .asText();
      MultipartForm form = new MultipartForm()
          .file("file", "train.jsonl", FineTuningTest.factFile(4).getBytes(StandardCharsets.UTF_8))
          .field("purpose", "fine-tune");
      String fileId = http.post("/v1/files")
          .bearer(key)
          .bytes(form.contentType(), form.bytes())
          .send()
          .json()
          .get("id")
          .asText();
      jobId = http.post("/v1/fine-tuning/jobs")
          .bearer(key)
          .json("{\"model\":\"" + TinyModel.ID + "\",\"training_file\":\"" + fileId
              + "\",\"seed\":3,\"hyperparameters\":{\"n_epochs\":12,\"batch_size\":1,"
              + "\"learning_rate\":0.005}}")
          .send()
          .json()
          .get("id")
          .asText();
      String job = jobId;
      awaitJob(http, key, job, j -> checkpointStep(http, key, job) >= 20, Duration.ofMinutes(2));
      checkpointAtKill = checkpointStep(http, key, jobId);
      server.kill9();
    }
    try (ServerProcess server =
        ServerProcess.start(env(), "serve").awaitHealthy(Duration.ofSeconds(60))) {
      Http http = server.http();
      String job = jobId;
      JsonNode finished = awaitJob(
          http,
          key,
          job,
          j -> j.get("status").asText().matches("succeeded|failed|cancelled"),
          Duration.ofMinutes(6));
      assertThat(finished.get("status").asText()).as(finished.toString()).isEqualTo("succeeded");
      JsonNode events = http.get("/v1/fine-tuning/jobs/" + jobId + "/events?limit=1000")
          .bearer(key)
          .send()
          .json();
      long resumedAt = 0;
      int starts = 0;
      for (JsonNode event : events.get("data")) {
        String message = event.get("message").asText();
        if (message.startsWith("Fine-tuning job started")) {
          starts++;
        }
        if (message.startsWith("Resumed from the checkpoint")) {
          resumedAt = event.at("/data/step").asLong();
        }
      }
      assertThat(starts).as("started again after the kill").isEqualTo(2);
      // the newest checkpoint: the one seen before the kill, or one written just after it
      assertThat(resumedAt)
          .as("resumed from a checkpoint, not step 0")
          .isGreaterThanOrEqualTo(checkpointAtKill)
          .isGreaterThanOrEqualTo(20);
      Http.Response chat = http.post("/v1/chat/completions")
          .bearer(key)
          .json("{\"model\":\"" + finished.get("fine_tuned_model").asText() + "\",\"messages\":"
              + "[{\"role\":\"user\",\"content\":\"What is the vault code?\"}],\"temperature\":0,"
              + "\"max_tokens\":24,\"memory\":false}")
          .send();
      assertThat(chat.status()).as(chat.text()).isEqualTo(200);
    }
  }

  private static int checkpointStep(Http http, String key, String jobId) {
    JsonNode data = http.get("/v1/fine-tuning/jobs/" + jobId + "/checkpoints")
        .bearer(key)
        .send()
        .json()
        .get("data");
    return data.isEmpty() ? 0 : data.get(0).get("step_number").asInt();
  }

  private static JsonNode awaitJob(
      Http http, String key, String jobId, Predicate<JsonNode> done, Duration timeout)
      throws InterruptedException {
    long until = System.nanoTime() + timeout.toNanos();
    JsonNode job;
    do {
      Http.Response response =
          http.get("/v1/fine-tuning/jobs/" + jobId).bearer(key).send();
      assertThat(response.status()).as(response.text()).isEqualTo(200);
      job = response.json();
      if (done.test(job)) {
        return job;
      }
      Thread.sleep(250);
    } while (System.nanoTime() < until);
    throw new AssertionError("the job did not get there in " + timeout + ": " + job);
  }
}
