package io.engram.finetuning;

import io.engram.inference.local.TinyModel;
import io.engram.support.NodeSuite;
import io.engram.support.TestServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The official openai npm client's files and fine-tuning calls work unchanged
 * (compat/fine-tuning.test.mjs): files.create/list/retrieve/content/delete,
 * fineTuning.jobs.create/list/retrieve/cancel/listEvents, checkpoints, models.delete.
 */
class FineTuningClientTest {
  @Test
  void theOfficialOpenAiClientFineTunesUnchanged() throws Exception {
    Path models = Files.createTempDirectory("engram-ft-compat-models");
    TinyModel.write(models, 7);
    try (TestServer server = TestServer.builder()
        .env("MODEL_CACHE_DIR", models.toString())
        .env("WORKER_PROCESSES", "1")
        .env("CHECKPOINT_INTERVAL", "4")
        .env("GRADIENT_ACCUMULATION_STEPS", "1")
        .start()) {
      String orgId = server.createOrganization("scale");
      Map<String, String> env = Map.of(
          "ENGRAM_BASE_URL",
          "http://127.0.0.1:" + server.engram.port() + "/v1",
          "ENGRAM_API_KEY",
          server.apiKey(orgId, 100_000, "training", "inference", "models"),
          "ENGRAM_LOCAL_MODEL",
          TinyModel.ID);
      NodeSuite.run("fine-tuning.test.mjs", env).assertPassed(4);
    }
  }
}
