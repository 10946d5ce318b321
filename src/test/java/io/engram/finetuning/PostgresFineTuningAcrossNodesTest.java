package io.engram.finetuning;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.inference.local.TinyModel;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Two nodes on one PostgreSQL, one storage volume and one model directory: jobs created on either
 * node are each trained exactly once (one node holds each job's lease), and a model trained on one
 * node is served by the other.
 */
class PostgresFineTuningAcrossNodesTest {
  @Test
  void eachJobRunsOnExactlyOneNodeAndItsModelIsServedByBoth() throws Exception {
    Path storage = Files.createTempDirectory("engram-ft-storage");
    Path models = Files.createTempDirectory("engram-ft-models");
    TinyModel.write(models, 7);
    try (TestServer first = node(TestServer.builder().postgres(), storage, models);
        TestServer second = node(TestServer.builder().sharing(first), storage, models)) {
      String org = first.createOrganization("scale");
      String key = first.apiKey(org, 100_000, "training", "inference");
      List<String> jobs = new ArrayList<>();
      for (TestServer node : List.of(first, second, first, second)) {
        String file = FineTuningTest.upload(node, key, FineTuningTest.factFile(1), "fine-tune")
            .json()
            .get("id")
            .asText();
        Http.Response job = node.http
            .post("/v1/fine-tuning/jobs")
            .bearer(key)
            .json("{\"model\":\"" + TinyModel.ID + "\",\"training_file\":\"" + file
                + "\",\"hyperparameters\":{\"n_epochs\":2,\"batch_size\":2}}")
            .send();
        assertThat(job.status()).as(job.text()).isEqualTo(200);
        jobs.add(job.json().get("id").asText());
      }
      for (String id : jobs) {
        JsonNode job = await(second, key, id);
        assertThat(job.get("status").asText()).as(job.toString()).isEqualTo("succeeded");
        JsonNode events = first
            .http
            .get("/v1/fine-tuning/jobs/" + id + "/events?limit=1000")
            .bearer(key)
            .send()
            .json();
        long starts = events.findValuesAsText("message").stream()
            .filter(message -> message.startsWith("Fine-tuning job started"))
            .count();
        assertThat(starts).as("job %s was started once", id).isEqualTo(1);
        String model = job.get("fine_tuned_model").asText();
        for (TestServer node : List.of(first, second)) {
          Http.Response chat = node.http
              .post("/v1/chat/completions")
              .bearer(key)
              .json("{\"model\":\"" + model + "\",\"messages\":[{\"role\":\"user\",\"content\":"
                  + "\"What is the vault code?\"}],\"max_tokens\":4,\"memory\":false}")
              .send();
          assertThat(chat.status()).as(chat.text()).isEqualTo(200);
        }
      }
    }
  }

  private static TestServer node(TestServer.Builder builder, Path storage, Path models) {
    return builder
        .env("ENGRAM_STORAGE_DIR", storage.toString())
        .env("MODEL_CACHE_DIR", models.toString())
        .env("WORKER_PROCESSES", "1")
        .env("GRADIENT_ACCUMULATION_STEPS", "1")
        .start();
  }

  private static JsonNode await(TestServer node, String key, String id) throws Exception {
    long until = System.nanoTime() + java.time.Duration.ofMinutes(3).toNanos();
    JsonNode job;
    do {
      job = node.http.get("/v1/fine-tuning/jobs/" + id).bearer(key).send().json();
      if (job.get("status").asText().matches("succeeded|failed|cancelled")) {
        return job;
      }
      Thread.sleep(200);
    } while (System.nanoTime() < until);
    throw new AssertionError("job " + id + " did not finish: " + job);
  }
}
