package io.engram.platform;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.engram.platform.config.ConfigException;
import io.engram.platform.config.ConfigSummary;
import io.engram.platform.config.EngramConfig;
import io.engram.platform.config.TracingSettings;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class EngramConfigTest {

  @Test
  void defaultsAreTheSpecs() {
    EngramConfig config = EngramConfig.fromEnvironment(Map.of());
    assertThat(config.server().port()).isEqualTo(8000);
    assertThat(config.server().host()).isEqualTo("0.0.0.0");
    assertThat(config.access().apiKeyRequired()).isTrue();
    assertThat(config.logging().level()).isEqualTo("info");
    assertThat(config.logging().format()).isEqualTo("json");
    assertThat(config.logging().destination()).isEqualTo("stdout");
    assertThat(config.logging().filePath()).isEqualTo(Path.of("/var/log/engram/app.log"));
    assertThat(config.server().corsOrigins()).containsExactly("*");
    assertThat(config.access().rateLimitRequests()).isEqualTo(100);
    assertThat(config.server().requestTimeoutSeconds()).isEqualTo(120);
    assertThat(config.inference().maxConcurrentRequests()).isEmpty();
    assertThat(config.storage().dataDir()).isEqualTo(Path.of("./data"));
    assertThat(config.inference().modelCacheDir()).isEqualTo(Path.of("./data/models"));
    assertThat(config.storage().usesPostgres()).isFalse();
    assertThat(config.inference().defaultModel()).isEmpty();
  }

  @Test
  void readsEveryVariableItIsGiven() {
    EngramConfig config = EngramConfig.fromEnvironment(Map.ofEntries(
        Map.entry("API_PORT", "9000"),
        Map.entry("API_HOST", "127.0.0.1"),
        Map.entry("API_KEY_REQUIRED", "false"),
        Map.entry("LOG_LEVEL", "WARNING"),
        Map.entry("LOG_FORMAT", "text"),
        Map.entry("LOG_DESTINATION", "file"),
        Map.entry("LOG_FILE_PATH", "/tmp/x.log"),
        Map.entry("CORS_ORIGINS", "https://a.example, https://b.example"),
        Map.entry("RATE_LIMIT_REQUESTS", "250"),
        Map.entry("REQUEST_TIMEOUT", "30"),
        Map.entry("MAX_CONCURRENT_REQUESTS", "12"),
        Map.entry("MODEL_CACHE_DIR", "/models"),
        Map.entry("DEFAULT_MODEL", "engram-chat"),
        Map.entry("ENGRAM_DATA_DIR", "/srv/engram"),
        Map.entry("DATABASE_URL", "postgresql://u:secret@db:5432/engram")));
    assertThat(config.server().port()).isEqualTo(9000);
    assertThat(config.access().apiKeyRequired()).isFalse();
    assertThat(config.logging().level()).isEqualTo("warning");
    assertThat(config.server().corsOrigins())
        .containsExactly("https://a.example", "https://b.example");
    assertThat(config.access().rateLimitRequests()).isEqualTo(250);
    assertThat(config.server().requestTimeoutSeconds()).isEqualTo(30);
    assertThat(config.inference().maxConcurrentRequests()).hasValue(12);
    assertThat(config.inference().modelCacheDir()).isEqualTo(Path.of("/models"));
    assertThat(config.inference().defaultModel()).isEqualTo("engram-chat");
    assertThat(config.storage().usesPostgres()).isTrue();
    assertThat(config.redactedValues().get("DATABASE_URL"))
        .isEqualTo("postgresql://u:***@db:5432/engram");
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "API_PORT|80|API_PORT must be between 1024 and 65535, got '80'",
        "API_PORT|http|API_PORT must be an integer between 1024 and 65535, got 'http'",
        "REQUEST_TIMEOUT|5|REQUEST_TIMEOUT must be between 10 and 600, got '5'",
        "REQUEST_TIMEOUT|601|REQUEST_TIMEOUT must be between 10 and 600, got '601'",
        "MAX_CONCURRENT_REQUESTS|0|MAX_CONCURRENT_REQUESTS must be between 1 and 1000, got '0'",
        "WORKER_PROCESSES|17|WORKER_PROCESSES must be between 1 and 16, got '17'",
        "BATCH_SIZE|257|BATCH_SIZE must be between 1 and 256, got '257'",
        "GPU_MEMORY_FRACTION|0.05|GPU_MEMORY_FRACTION must be between 0.1 and 1.0, got '0.05'",
        "LOG_LEVEL|verbose|LOG_LEVEL must be one of debug, info, warning, error, critical, got 'verbose'",
        "LOG_FORMAT|xml|LOG_FORMAT must be one of json, text, structured, got 'xml'",
        "LOG_DESTINATION|kafka|LOG_DESTINATION must be one of stdout, file, syslog, got 'kafka'",
        "MODEL_QUANTIZATION|fp4|MODEL_QUANTIZATION must be one of none, int8, int4, gptq, awq, got 'fp4'",
        "MODEL_QUANTIZATION|int8|MODEL_QUANTIZATION=int8 cannot be served: the in-process engine (jlama) has no matrix product for int8 weights",
        "MODEL_QUANTIZATION|gptq|MODEL_QUANTIZATION=gptq names weights quantized ahead of time by GPTQ",
        "MODEL_QUANTIZATION|awq|Serve a AWQ model from its own server",
        "API_KEY_REQUIRED|maybe|API_KEY_REQUIRED must be true or false, got 'maybe'",
        "RATE_LIMIT_REQUESTS|0|RATE_LIMIT_REQUESTS must be between 1 and 1000000, got '0'",
        "ENGRAM_ADMIN_KEY|short|ENGRAM_ADMIN_KEY must be at least 24 characters without spaces",
        "DATABASE_URL|mysql://db/engram|DATABASE_URL must be empty (SQLite in ENGRAM_DATA_DIR) or a PostgreSQL URL",
      })
  void aBadValueIsRefusedNamingTheVariableAndItsRange(String name, String value, String message) {
    assertBad(name, value, message);
  }

  @Test
  void anUpstreamKeyWithALineBreakIsRefusedAtStart() {
    assertBad(
        "ENGRAM_UPSTREAM_API_KEY",
        "sk-upstream\nkey",
        "ENGRAM_UPSTREAM_API_KEY must not contain control");
  }

  private static void assertBad(String name, String value, String message) {
    assertThatThrownBy(() -> EngramConfig.fromEnvironment(Map.of(name, value)))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(message);
  }

  @Test
  void theSolrIndexNeedsItsNodesAndATimeoutWithinTheRequests() {
    assertBad("ENGRAM_MEMORY_INDEX", "solr", "ENGRAM_MEMORY_INDEX=solr needs ENGRAM_SOLR_URL");
    assertBad("ENGRAM_MEMORY_INDEX", "opensearch", "ENGRAM_MEMORY_INDEX");
    assertThatThrownBy(() -> EngramConfig.fromEnvironment(Map.of(
            "ENGRAM_MEMORY_INDEX", "solr",
            "ENGRAM_SOLR_URL", "solr-1:8983/solr")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("ENGRAM_SOLR_URL must list http:// or https:// URLs");
    assertThatThrownBy(() -> EngramConfig.fromEnvironment(Map.of(
            "ENGRAM_MEMORY_INDEX", "solr",
            "ENGRAM_SOLR_URL", "http://solr-1:8983/solr",
            "ENGRAM_SOLR_TIMEOUT_MS", "20000",
            "REQUEST_TIMEOUT", "60")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("at most a quarter of REQUEST_TIMEOUT");
    EngramConfig config = EngramConfig.fromEnvironment(Map.of(
        "ENGRAM_MEMORY_INDEX", "solr",
        "ENGRAM_SOLR_URL", " http://solr-1:8983/solr, http://solr-2:8983/solr ",
        "ENGRAM_SOLR_PASSWORD", "s3cret-solr"));
    assertThat(config.memoryIndex().solrNodes()).hasSize(2);
    assertThat(config.redactedValues().get("ENGRAM_SOLR_PASSWORD")).isEqualTo("<set>");
    assertThat(config.memoryIndex().toString()).doesNotContain("s3cret-solr");
  }

  @Test
  void everyProblemIsReportedAtOnce() {
    assertThatThrownBy(
            () -> EngramConfig.fromEnvironment(Map.of("API_PORT", "1", "LOG_FORMAT", "xml")))
        .isInstanceOfSatisfying(
            ConfigException.class, e -> assertThat(e.problems()).hasSize(2));
  }

  @Test
  void openTelemetrysVariablesAreCheckedAtStartAndTheCollectorsHeadersNeverShown() {
    assertThatThrownBy(() -> EngramConfig.fromEnvironment(Map.of(
            "OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318",
            "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc",
            "OTEL_EXPORTER_OTLP_HEADERS", "x-api-key",
            "OTEL_TRACES_SAMPLER_ARG", "2")))
        .isInstanceOfSatisfying(ConfigException.class, e -> {
          assertThat(e.problems()).hasSize(4);
          assertThat(String.join("\n", e.problems()))
              .contains(
                  "OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL",
                  "OTEL_EXPORTER_OTLP_PROTOCOL must be one of http/protobuf",
                  "OTEL_EXPORTER_OTLP_HEADERS takes name=value pairs",
                  "OTEL_TRACES_SAMPLER_ARG must be between 0.0 and 1.0");
        });
    EngramConfig config = EngramConfig.fromEnvironment(Map.of(
        "OTEL_EXPORTER_OTLP_ENDPOINT", "https://collector.example:4318/",
        "OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=s3cr%3Dt+k,tenant=acme",
        "OTEL_RESOURCE_ATTRIBUTES", "service.name=from-resource,deployment.environment=prod"));
    TracingSettings tracing = config.tracing();
    assertThat(tracing.endpoint()).isEqualTo("https://collector.example:4318/v1/traces");
    assertThat(tracing.headers()).containsEntry("x-api-key", "s3cr=t+k");
    assertThat(tracing.serviceName()).isEqualTo("from-resource");
    assertThat(config.redactedValues().get("OTEL_EXPORTER_OTLP_HEADERS")).isEqualTo("<set>");
    assertThat(String.join(" ", ConfigSummary.of(config).get("traces"))).doesNotContain("s3cr");
    assertThatThrownBy(() ->
            EngramConfig.fromEnvironment(Map.of("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=50%")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("OTEL_EXPORTER_OTLP_HEADERS: the value of entry 1")
        .hasMessageNotContaining("50%");
    // Off unless an endpoint is set, and off whatever is set when the SDK is disabled.
    assertThat(EngramConfig.fromEnvironment(Map.of()).tracing().exports()).isFalse();
    assertThat(EngramConfig.fromEnvironment(
                Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", "OTEL_SDK_DISABLED", "true"))
            .tracing()
            .exports())
        .isFalse();
    assertThat(EngramConfig.fromEnvironment(
                Map.of("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c:4318/custom"))
            .tracing()
            .endpoint())
        .isEqualTo("http://c:4318/custom");
  }

  @Test
  void anEphemeralPortIsAllowedOnlyAsAnOverride() {
    assertThatThrownBy(() -> EngramConfig.fromEnvironment(Map.of("API_PORT", "0")))
        .isInstanceOf(ConfigException.class);
    assertThat(EngramConfig.fromEnvironment(Map.of())
            .withOverrides(Map.of("API_PORT", "0"))
            .server()
            .port())
        .isZero();
  }

  @Test
  void theStartUpSummaryShowsWhatIsInEffectGroupedAndWhatWasSet() {
    Map<String, List<String>> summary = ConfigSummary.of(EngramConfig.fromEnvironment(Map.of(
        "API_PORT",
        "9000",
        "ENGRAM_ADMIN_KEY",
        "an-admin-key-long-enough-0123",
        "GPU_MEMORY_FRACTION",
        "0.5",
        "BATCH_SIZE",
        "8")));
    assertThat(summary.get("server")).contains("API_PORT=9000 (set)", "API_HOST=0.0.0.0");
    assertThat(summary.get("access")).contains("ENGRAM_ADMIN_KEY=<set> (set)");
    assertThat(String.join(" ", summary.get("logging")))
        .as("logging to stdout: no file")
        .doesNotContain("LOG_FILE_PATH");
    assertThat(String.join(" ", summary.get("inference")))
        .doesNotContain("ENGRAM_UPSTREAM_API_KEY")
        .contains("MAX_CONCURRENT_REQUESTS=(by plan)");
    assertThat(summary.get("in-process engine")).contains("GPU_MEMORY_FRACTION=0.5 (set)");
    assertThat(summary).doesNotContainKey("set but not used by this build");
    // An organization's own variables, set for the server, are every organization's default.
    assertThat(summary.get("organization defaults"))
        .contains(
            "BATCH_SIZE=8 (set)", "GRADIENT_ACCUMULATION_STEPS=4", "CONVERSATION_HISTORY=true");

    Map<String, List<String>> toFile = ConfigSummary.of(
        EngramConfig.fromEnvironment(Map.of()).withOverrides(Map.of("LOG_DESTINATION", "file")));
    assertThat(String.join(" ", toFile.get("logging")))
        .contains("LOG_FILE_PATH=", "LOG_DESTINATION=file (set)");
    assertThat(String.join(" ", toFile.get("server")))
        .as("defaults carried over are not 'set'")
        .doesNotContain("(set)");
  }
}
