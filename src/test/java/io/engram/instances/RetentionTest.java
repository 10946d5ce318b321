package io.engram.instances;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.Http;
import io.engram.support.MutableClock;
import io.engram.support.TestServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Retention policies: checked field by field, kept, and applied: a dry run tells exactly what a
 * run then deletes (the latest kept, the old and the oversized gone, patterns and adapters as
 * wholes), each deletion in the storage log; the hourly job runs them too.
 */
class RetentionTest {
  private static final MutableClock CLOCK = new MutableClock(Instant.parse("2026-11-01T08:00:00Z"));
  private static TestServer server;

  @BeforeAll
  static void start() {
    server = TestServer.builder().clock(CLOCK).start();
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private static Http.Response policies(String org, String json) {
    return server.asOperator(
        server.http.post("/v1/organizations/" + org + "/retention").json(json));
  }

  private static JsonNode run(String org, boolean dry) {
    Http.Response run = server.asOperator(server
        .http
        .post("/v1/organizations/" + org + "/retention/run")
        .json("{\"dry_run\":" + dry + "}"));
    assertThat(run.status()).as(run.text()).isEqualTo(200);
    return run.json();
  }

  private static String instance(String org) {
    return server
        .asOperator(server.http.get("/v1/organizations/" + org + "/instances"))
        .json()
        .at("/data/0/id")
        .asText();
  }

  private static void put(String nano, String path, String text) {
    Http.Response put = server.asOperator(server
        .http
        .method("PUT", "/v1/nano/" + nano + "/storage/files/" + path)
        .body("text/plain", text));
    assertThat(put.status()).as(put.text()).isIn(200, 201);
  }

  private static List<String> paths(String nano) {
    List<String> paths = new ArrayList<>();
    server
        .asOperator(server.http.get("/v1/nano/" + nano + "/storage/files?limit=1000"))
        .json()
        .get("data")
        .forEach(file -> paths.add(file.get("path").asText()));
    return paths;
  }

  private static List<String> items(JsonNode run) {
    List<String> items = new ArrayList<>();
    run.get("deleted").forEach(line -> items.add(line.get("item").asText()));
    return items;
  }

  @Test
  void policiesAreCheckedFieldByField() {
    String org = server.createOrganization("seed");
    String[][] cases = {
      {"{\"policies\":[{\"type\":\"training_data\",\"max_age_days\":3}]}", "policies[0].type"},
      {
        "{\"policies\":[{\"type\":\"results\",\"min_age_days\":3,\"max_age_days\":9}]}",
        "policies[0].min_age_days"
      },
      {"{\"policies\":[{\"type\":\"results\",\"max_age_days\":0}]}", "policies[0].max_age_days"},
      {"{\"policies\":[{\"type\":\"results\",\"max_age_days\":1.5}]}", "policies[0].max_age_days"},
      {
        "{\"policies\":[{\"type\":\"data\",\"max_age_days\":3,\"export_before_delete\":true}]}",
        "policies[0].export_destination"
      },
      {
        "{\"policies\":[{\"type\":\"data\",\"max_age_days\":3,\"archive_to\":\"ftp://x/y\"}]}",
        "policies[0].archive_to"
      },
      {
        "{\"policies\":[{\"type\":\"data\",\"max_age_days\":3,\"archive_to\":\"s3://bucket/old\"}]}",
        "policies[0].archive_to"
      },
      {
        "{\"policies\":[{\"type\":\"data\",\"max_age_days\":3,\"pattern\":\"[a-\"}]}",
        "policies[0].pattern"
      },
      {
        "{\"policies\":[{\"type\":\"conversation_history\",\"keep_latest\":3,\"pattern\":\"*\"}]}",
        "policies[0].pattern"
      },
      {"{\"policies\":[{\"type\":\"data\"}]}", "policies[0]"},
      {"{\"policies\":[{\"type\":\"data\",\"max_age_days\":3,\"colour\":1}]}", "policies[0].colour"
      },
      {"{\"policies\":{}}", "policies"},
    };
    for (String[] bad : cases) {
      Http.Response refused = policies(org, bad[0]);
      assertThat(refused.status()).as(bad[0] + " -> " + refused.text()).isEqualTo(400);
      assertThat(refused.json().at("/error/param").asText()).as(bad[0]).isEqualTo(bad[1]);
    }
    // Nothing of a refused set was kept.
    assertThat(server
            .asOperator(server.http.get("/v1/organizations/" + org + "/retention"))
            .json()
            .get("policies"))
        .isEmpty();
  }

  @Test
  void aDryRunTellsExactlyWhatTheRunThenDeletes() {
    String org = server.createOrganization("seed");
    String nano = instance(org);
    for (int i = 1; i <= 5; i++) {
      put(nano, "results/run-" + i + ".json", "{\"run\":" + i + "}");
      CLOCK.advance(Duration.ofDays(2));
    }
    put(nano, "data/keep.csv", "a,b");
    put(nano, "data/scratch/one.tmp", "xxxxxx");
    CLOCK.advance(Duration.ofDays(1));
    put(nano, "data/scratch/two.tmp", "yyyyyy");
    put(nano, "lora_adapters/old/adapter.safetensors", "weights");
    put(nano, "lora_adapters/old/adapter_config.json", "{}");
    CLOCK.advance(Duration.ofDays(3));
    put(nano, "lora_adapters/new/adapter.safetensors", "weights2");
    CLOCK.advance(Duration.ofDays(1));

    Http.Response set = policies(org, """
        {"policies":[
          {"type":"results","keep_latest":2,"max_age_days":5},
          {"type":"data","pattern":"scratch/*.tmp","max_size_gb":0.000000007},
          {"type":"lora_adapters","keep_latest":1}
        ]}""");
    assertThat(set.status()).as(set.text()).isEqualTo(200);
    assertThat(set.json().get("policies")).hasSize(3);

    JsonNode dry = run(org, true);
    assertThat(dry.get("dry_run").asBoolean()).isTrue();
    // results: run-5 and run-4 are the latest two; run-1..3 are older than 5 days.
    assertThat(items(dry))
        .containsExactlyInAnyOrder(
            "results/run-1.json",
            "results/run-2.json",
            "results/run-3.json",
            "data/scratch/one.tmp",
            "lora_adapters/old");
    assertThat(paths(nano)).hasSize(11); // a dry run deletes nothing

    JsonNode real = run(org, false);
    assertThat(items(real)).isEqualTo(items(dry));
    assertThat(paths(nano))
        .containsExactlyInAnyOrder(
            "results/run-4.json",
            "results/run-5.json",
            "data/keep.csv",
            "data/scratch/two.tmp",
            "lora_adapters/new/adapter.safetensors");
    JsonNode log = server
        .asOperator(server.http.get("/v1/nano/" + nano + "/storage/logs?limit=200"))
        .json();
    long logged = 0;
    for (JsonNode entry : log.get("data")) {
      if (entry.get("action").asText().equals("retention_delete")) {
        logged++;
      }
    }
    assertThat(logged).isEqualTo(6); // the old adapter was two files
    assertThat(server
            .asOperator(server.http.get("/v1/organizations/" + org + "/retention"))
            .json()
            .get("last_run_at")
            .asLong())
        .isEqualTo(CLOCK.instant().getEpochSecond());

    String metrics = server.asOperator(server.http.get("/metrics")).text();
    assertThat(metrics).contains("engram_retention_deleted_total{type=\"results\"} 3.0");
    assertThat(metrics).contains("engram_retention_deleted_total{type=\"lora_adapters\"} 1.0");

    // The hourly job applies them too: a new old result goes without a request.
    put(nano, "results/run-6.json", "{}");
    put(nano, "results/run-7.json", "{}");
    CLOCK.advance(Duration.ofDays(6));
    server.engram.runStorageHousekeeping();
    assertThat(paths(nano)).contains("results/run-6.json", "results/run-7.json");
    assertThat(paths(nano)).doesNotContain("results/run-4.json", "results/run-5.json");
  }
}
