package io.engram.finetuning;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.FakeFineTuningApi;
import io.engram.support.FakeUpstream;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The remote trainer seam: with ENGRAM_FINE_TUNING_UPSTREAM on, a job on a model the upstream
 * serves goes to the upstream's OpenAI-compatible fine-tuning API (a fake of it here): the file
 * uploaded there, the job created there and mirrored (status, events), a cancel sent there, and
 * the resulting model listed for its organization only and served by the upstream.
 */
class UpstreamFineTuningTest {
  static FakeUpstream upstream;
  static FakeFineTuningApi api;
  static TestServer server;
  static String key;
  static String otherKey;

  @BeforeAll
  static void start() {
    upstream = new FakeUpstream();
    api = upstream.fineTuning();
    server = TestServer.builder()
        .env("ENGRAM_UPSTREAM_URL", upstream.baseUrl())
        .env("ENGRAM_UPSTREAM_MODEL", "gpt-upstream")
        .env("DEFAULT_MODEL", "house-model")
        .env("ENGRAM_FINE_TUNING_UPSTREAM", "true")
        .env("ENGRAM_FINE_TUNING_UPSTREAM_POLL_MILLIS", "50")
        .start();
    String org = server.createOrganization("scale");
    key = server.apiKey(org, 100_000, "training", "inference");
    otherKey = server.apiKey(server.createOrganization("scale"), 100_000, "admin");
  }

  @AfterAll
  static void stop() {
    server.close();
    upstream.close();
  }

  private static String upload() {
    return FineTuningTest.upload(server, key, FineTuningTest.factFile(1), "fine-tune")
        .json()
        .get("id")
        .asText();
  }

  private static JsonNode await(String jobId, String status) throws InterruptedException {
    long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    JsonNode job;
    do {
      job = server.http.get("/v1/fine-tuning/jobs/" + jobId).bearer(key).send().json();
      if (job.get("status").asText().equals(status)) {
        return job;
      }
      Thread.sleep(50);
    } while (System.nanoTime() < until);
    throw new AssertionError("not " + status + ": " + job);
  }

  @Test
  void aJobOnAnUpstreamModelIsTrainedUpstreamAndItsModelServedToItsOrganization() throws Exception {
    api.looksToFinish(4);
    String fileId = upload();
    Http.Response created = server
        .http
        .post("/v1/fine-tuning/jobs")
        .bearer(key)
        .json("{\"model\":\"house-model\",\"training_file\":\"" + fileId + "\",\"suffix\":\"v1\","
            + "\"hyperparameters\":{\"n_epochs\":2}}")
        .send();
    assertThat(created.status()).as(created.text()).isEqualTo(200);
    String jobId = created.json().get("id").asText();
    JsonNode job = await(jobId, "succeeded");
    String model = job.get("fine_tuned_model").asText();
    assertThat(model).startsWith("ft:gpt-upstream:fake::");
    assertThat(job.get("trained_tokens").asLong()).isEqualTo(1234);

    String remoteId = api.jobs().keySet().iterator().next();
    JsonNode request = api.request(remoteId);
    assertThat(request.get("model").asText()).isEqualTo("gpt-upstream");
    assertThat(request.get("suffix").asText()).isEqualTo("v1");
    assertThat(request.at("/hyperparameters/n_epochs").asInt()).isEqualTo(2);
    assertThat(new String(
            api.files().get(request.get("training_file").asText()), StandardCharsets.UTF_8))
        .isEqualTo(FineTuningTest.factFile(1));

    JsonNode events = server
        .http
        .get("/v1/fine-tuning/jobs/" + jobId + "/events?limit=100")
        .bearer(key)
        .send()
        .json();
    assertThat(events.findValuesAsText("message"))
        .contains(
            "Created the upstream fine-tuning job " + remoteId + " on base model gpt-upstream",
            "Step 2",
            "The job has successfully completed");

    assertThat(server.http.get("/v1/models").bearer(key).send().json().findValuesAsText("id"))
        .contains(model);
    assertThat(server.http.get("/v1/models").bearer(otherKey).send().json().findValuesAsText("id"))
        .doesNotContain(model);
    Http.Response chat = server
        .http
        .post("/v1/chat/completions")
        .bearer(key)
        .json("{\"model\":\"" + model + "\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
            + "\"memory\":false}")
        .send();
    assertThat(chat.status()).as(chat.text()).isEqualTo(200);
    assertThat(upstream.lastRequest().get("model").asText()).isEqualTo(model);
    assertThat(server
            .http
            .post("/v1/chat/completions")
            .bearer(otherKey)
            .json("{\"model\":\"" + model + "\",\"messages\":[{\"role\":\"user\",\"content\":"
                + "\"hi\"}],\"memory\":false}")
            .send()
            .status())
        .isEqualTo(404);

    assertThat(server.http.delete("/v1/models/" + model).bearer(key).send().status())
        .isEqualTo(200);
    assertThat(api.deletedModels()).contains(model);
    assertThat(server.http.get("/v1/models").bearer(key).send().json().findValuesAsText("id"))
        .doesNotContain(model);
  }

  @Test
  void aCancelIsSentUpstream() throws Exception {
    api.looksToFinish(1_000_000);
    String jobId = server
        .http
        .post("/v1/fine-tuning/jobs")
        .bearer(key)
        .json("{\"model\":\"house-model\",\"training_file\":\"" + upload() + "\"}")
        .send()
        .json()
        .get("id")
        .asText();
    await(jobId, "running");
    assertThat(server
            .http
            .post("/v1/fine-tuning/jobs/" + jobId + "/cancel")
            .bearer(key)
            .send()
            .status())
        .isEqualTo(200);
    await(jobId, "cancelled");
    assertThat(api.jobs().values()).anyMatch(FakeFineTuningApi.Job::cancelled);
  }
}
