package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.inference.local.TinyModel;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * The in-process engine's settings, each by its effect through a running server:
 * MODEL_QUANTIZATION (the weights' memory), KV_CACHE_SIZE_GB and GPU_MEMORY_FRACTION (the context a
 * model is served with), BATCH_SIZE and ENABLE_FLASH_ATTENTION (forward passes per prompt),
 * WORKER_PROCESSES (an organization's share by plan, or its own).
 */
class LocalEngineSettingsTest {
  /** Wide enough that the layers' weights (13.6M parameters, 54 MB in F32) dominate the model. */
  private static final TinyModel.Shape WIDE = new TinyModel.Shape(512, 1536, 4, 8, 8, 2048);
  /** 64 KiB of KV cache per token (64 layers x one 128-wide head x key and value x F32). */
  private static final TinyModel.Shape LONG = new TinyModel.Shape(128, 128, 64, 1, 1, 65_536);

  private static TestServer serve(Path models, String model, String... env) {
    TestServer.Builder builder =
        TestServer.builder().env("MODEL_CACHE_DIR", models.toString()).env("DEFAULT_MODEL", model);
    for (int i = 0; i < env.length; i += 2) {
      builder.env(env[i], env[i + 1]);
    }
    return builder.start();
  }

  private static Http.Response chat(TestServer server, String token, String extra) {
    return server
        .http
        .post("/v1/chat/completions")
        .bearer(token)
        .json("{\"messages\":[{\"role\":\"user\",\"content\":\"Where is the office of "
            + "the data team this year and what is our model\"}],\"memory\":false" + extra + "}")
        .send();
  }

  private static int contextLength(TestServer server, String key, String model) {
    for (JsonNode listed :
        server.http.get("/v1/models").bearer(key).send().json().get("data")) {
      if (listed.get("id").asText().equals(model)) {
        return listed.get("context_length").asInt();
      }
    }
    throw new AssertionError(model + " is not listed");
  }

  @Test
  void int4KeepsTheLayersWeightsInASixthOfTheirMemory() throws IOException {
    Path models = Files.createTempDirectory("engram-wide");
    TinyModel.write(models, "wide", 11, WIDE);
    long layerParameters = 4L * (4L * 512 * 512 + 3L * 512 * 1536);
    double f32 = layerParameters * 4.0;
    Map<String, Double> nativeBytes = new LinkedHashMap<>();
    for (String quantization : List.of("none", "int4")) {
      System.gc(); // earlier servers' direct buffers go now, not during this load
      try (TestServer server =
          serve(models, "wide", "MODEL_QUANTIZATION", quantization, "WORKER_PROCESSES", "1")) {
        String org = server.createOrganization("seed");
        Http.Response answer =
            chat(server, server.token(org, null, "inference:chat"), ",\"max_tokens\":3");
        assertThat(answer.status()).as(quantization + ": " + answer.text()).isEqualTo(200);
        nativeBytes.put(
            quantization,
            server.metric(
                "engram_local_weights_native_bytes", "quantization=\"" + quantization + "\""));
      }
    }
    // Unquantized, the weights are read from the mapped file: no copy. int4 keeps half a byte and
    // its 32-weight block's share of a float scale per weight (0.625 bytes: 16 % of F32).
    assertThat(nativeBytes.get("none")).as("%s", nativeBytes).isLessThan(0.05 * f32);
    assertThat(nativeBytes.get("int4")).as("%s", nativeBytes).isBetween(0.12 * f32, 0.21 * f32);
  }

  @Test
  void theKvCacheBoundsTheContextAModelIsServedWith() throws IOException {
    Path models = Files.createTempDirectory("engram-long");
    TinyModel.write(models, "long", 5, LONG);
    long perToken = 2L * 64 * 128 * Float.BYTES;
    long page = 1L << 20;
    try (TestServer server = serve(models, "long", "KV_CACHE_SIZE_GB", "1")) {
      String org = server.createOrganization("seed");
      assertThat(contextLength(server, server.apiKey(org, 1000, "inference"), "long"))
          .isEqualTo((int) ((1L << 30) / perToken - 2 * page / perToken));
      assertThat(server.metric("engram_local_kv_cache_bytes", "state=\"capacity\""))
          .isEqualTo((double) (1L << 30));
    }
    // Unset, the cache is GPU_MEMORY_FRACTION of the JVM's native memory (the heap's maximum
    // here) less the quantized weights (none here: the weights are read from the mapped file).
    long nativeLimit = nativeMemoryLimit();
    for (String fraction : List.of("0.1", "0.2")) {
      try (TestServer server = serve(models, "long", "GPU_MEMORY_FRACTION", fraction)) {
        String org = server.createOrganization("seed");
        long cache = (long) (Double.parseDouble(fraction) * nativeLimit);
        assertThat(server.metric("engram_local_kv_cache_bytes", "state=\"capacity\""))
            .isEqualTo((double) cache);
        int served = contextLength(server, server.apiKey(org, 1000, "inference"), "long");
        assertThat(served).isEqualTo((int) (cache / perToken - 2 * page / perToken));
        String token = server.token(org, null, "inference:chat");
        if (served + 10 <= 4096) { // within Seed's tokens per request: the context refuses it
          Http.Response tooLong = chat(server, token, ",\"max_tokens\":" + (served + 10));
          assertThat(tooLong.status()).as(tooLong.text()).isEqualTo(400);
          assertThat(tooLong.json().at("/error/code").asText())
              .isEqualTo("context_length_exceeded");
        }
        Http.Response fits = chat(server, token, ",\"max_tokens\":3");
        assertThat(fits.status()).as(fits.text()).isEqualTo(200);
      }
    }
  }

  private static long nativeMemoryLimit() {
    long set = Long.parseLong(
        ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class)
            .getVMOption("MaxDirectMemorySize")
            .getValue());
    return set > 0 ? set : Runtime.getRuntime().maxMemory();
  }

  @Test
  void thePromptGoesThroughBatchSizeTokensPerPassOrOneAtATimeWithoutFlashAttention()
      throws IOException {
    Path models = Files.createTempDirectory("engram-tiny");
    TinyModel.write(models, 3);
    for (String flash : List.of("true", "false")) {
      try (TestServer server =
          serve(models, TinyModel.ID, "BATCH_SIZE", "4", "ENABLE_FLASH_ATTENTION", flash)) {
        String org = server.createOrganization("seed");
        String token = server.token(org, null, "inference:chat");
        double before = server.metric("engram_local_prompt_passes_total", "");
        Http.Response answer = chat(server, token, ",\"max_tokens\":2,\"temperature\":0");
        assertThat(answer.status()).as(answer.text()).isEqualTo(200);
        int promptTokens = answer.json().at("/usage/prompt_tokens").asInt();
        assertThat(promptTokens).isGreaterThan(8);
        double passes = server.metric("engram_local_prompt_passes_total", "") - before;
        assertThat(passes)
            .as("flash attention " + flash + ", " + promptTokens + " prompt tokens")
            .isEqualTo(flash.equals("true") ? Math.ceil(promptTokens / 4.0) : promptTokens);
      }
    }
  }

  @Test
  void anOrganizationRunsItsPlansShareOfTheWorkersOrItsOwnWorkerProcesses() throws Exception {
    Path models = Files.createTempDirectory("engram-tiny");
    TinyModel.write(models, 9);
    try (TestServer server = serve(models, TinyModel.ID)) {
      var engine = server.localEngine(TinyModel.ID);
      String spark = server.createOrganization("spark");
      String own = server.createOrganization("spark");
      Http.Response set = server
          .http
          .post("/v1/organizations/" + own + "/env")
          .bearer(TestServer.ADMIN_KEY)
          .json("{\"variables\":{\"WORKER_PROCESSES\":\"2\"}}")
          .send();
      assertThat(set.status()).as(set.text()).isIn(200, 201);
      Map<String, Integer> peaks = new LinkedHashMap<>();
      for (String org : List.of(spark, own)) {
        String token = server.token(org, null, "inference:chat");
        for (int round = 0; round < 3 && peaks.getOrDefault(org, 0) < 2; round++) {
          List<CompletableFuture<Http.Response>> calls = new ArrayList<>();
          for (int i = 0; i < 3; i++) {
            calls.add(CompletableFuture.supplyAsync(
                () -> chat(server, token, ",\"max_tokens\":300,\"stop\":[\"</never>\"]")));
          }
          calls.forEach(call -> {
            Http.Response answer = call.join();
            assertThat(answer.status()).as(answer.text()).isEqualTo(200);
          });
          peaks.put(org, engine.capacity().peakFor(org));
        }
      }
      assertThat(peaks.get(spark)).as("Spark's share is one worker").isEqualTo(1);
      if (Runtime.getRuntime().availableProcessors() >= 2) {
        assertThat(peaks.get(own)).as("WORKER_PROCESSES=2 for the organization").isEqualTo(2);
      }
    }
  }
}
