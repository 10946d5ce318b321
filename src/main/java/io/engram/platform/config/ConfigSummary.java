package io.engram.platform.config;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The start-up configuration as an operator reads it: grouped by what it configures, only what is
 * in effect (the log file only when logging to a file, the upstream's settings only when there is
 * one, the WebSocket limits only when WebSockets are on), each value marked {@code (set)} when it
 * came from the environment rather than its default, secrets masked. Variables the spec lists but
 * this build does not use are shown only when someone set them, so a setting that does nothing is
 * said to do nothing.
 */
public final class ConfigSummary {
  private static final Map<String, List<String>> GROUPS = new LinkedHashMap<>();

  static {
    GROUPS.put(
        "server",
        List.of(
            "API_HOST",
            "API_PORT",
            "CORS_ORIGINS",
            "REQUEST_TIMEOUT",
            "ENGRAM_MAX_BODY_BYTES",
            "ENGRAM_SHUTDOWN_GRACE_SECONDS"));
    GROUPS.put(
        "access",
        List.of(
            "API_KEY_REQUIRED",
            "ENGRAM_OPEN_ORGANIZATION",
            "ENGRAM_ADMIN_KEY",
            "RATE_LIMIT_REQUESTS",
            "ENGRAM_SESSION_TTL_MINUTES",
            "ENGRAM_COOKIE_SECURE",
            "ENGRAM_BANDWIDTH_MBPS"));
    GROUPS.put("logging", List.of("LOG_LEVEL", "LOG_FORMAT", "LOG_DESTINATION", "LOG_FILE_PATH"));
    GROUPS.put(
        "storage",
        List.of(
            "ENGRAM_DATA_DIR",
            "DATABASE_URL",
            "REDIS_URL",
            "ENGRAM_SLOT_LEASE_SECONDS",
            "ENGRAM_SECRET_KEY",
            "ENGRAM_STORAGE_DIR",
            "ENGRAM_BACKUP_DIR",
            "ENGRAM_BACKUP_INTERVAL_HOURS",
            "ENGRAM_S3_ENDPOINT",
            "ENGRAM_GCS_ENDPOINT",
            "ENGRAM_AZURE_BLOB_ENDPOINT"));
    GROUPS.put(
        "inference",
        List.of(
            "DEFAULT_MODEL",
            "MODEL_CACHE_DIR",
            "MAX_CONCURRENT_REQUESTS",
            "WORKER_PROCESSES",
            "MAX_MODEL_SIZE_GB",
            "ENGRAM_UPSTREAM_URL",
            "ENGRAM_UPSTREAM_API_KEY",
            "ENGRAM_UPSTREAM_MODEL",
            "ENGRAM_UPSTREAM_CONTEXT_LENGTH",
            "ENGRAM_STREAM_KEEPALIVE_SECONDS",
            "ENGRAM_WEBSOCKET_ENABLED",
            "ENGRAM_WEBSOCKET_MAX_CONNECTIONS",
            "ENGRAM_WEBSOCKET_IDLE_TIMEOUT",
            "ENGRAM_WEBSOCKET_AUTH_TIMEOUT",
            "ENGRAM_ASSISTANT_MAX_TOOL_STEPS",
            "ENGRAM_RESPONSE_CACHE_MB"));
    GROUPS.put(
        "in-process engine",
        List.of(
            "MODEL_QUANTIZATION",
            "KV_CACHE_SIZE_GB",
            "GPU_MEMORY_FRACTION",
            "ENABLE_FLASH_ATTENTION",
            "MODEL_AUTO_DOWNLOAD",
            "HF_ENDPOINT",
            "HF_TOKEN"));
    GROUPS.put(
        "memory",
        List.of(
            "ENGRAM_REFLECTION_SCHEDULER",
            "ENGRAM_MEMORY_INDEX",
            "ENGRAM_SOLR_URL",
            "ENGRAM_SOLR_COLLECTION",
            "ENGRAM_SOLR_SHARDS",
            "ENGRAM_SOLR_REPLICAS",
            "ENGRAM_SOLR_USERNAME",
            "ENGRAM_SOLR_PASSWORD",
            "ENGRAM_SOLR_TIMEOUT_MS"));
    GROUPS.put(
        "network",
        List.of(
            "API_TLS_PORT",
            "ENGRAM_TLS_CERTIFICATE",
            "ENGRAM_TLS_PRIVATE_KEY",
            "ENGRAM_TLS_ALLOW_TLS12",
            "ENGRAM_SERVER_NAMES",
            "ENGRAM_TRUSTED_PROXIES",
            "ENGRAM_DNS_RESOLVER",
            "ENGRAM_DOMAIN_CHECK_SECONDS"));
    GROUPS.put(
        "fine-tuning",
        List.of(
            "ENGRAM_FINE_TUNING_JOBS_PER_NODE",
            "ENGRAM_FINE_TUNING_LEASE_SECONDS",
            "ENGRAM_FINE_TUNING_UPSTREAM",
            "ENGRAM_FINE_TUNING_UPSTREAM_POLL_MILLIS",
            "ENGRAM_TORCH_CACHE_DIR"));
    GROUPS.put(
        "monitoring", List.of("ENGRAM_ALERT_INTERVAL_SECONDS", "ENGRAM_WEBHOOK_RETRY_MILLIS"));
    List<String> traces = new ArrayList<>();
    EnvironmentVariables.all().forEach(spec -> {
      if (spec.name().startsWith("OTEL_")) {
        traces.add(spec.name());
      }
    });
    GROUPS.put("traces", List.copyOf(traces));
    // Variables each organization may set for itself (docs/configuration.md); what the server's
    // environment says is every organization's default until it does.
    GROUPS.put(
        "organization defaults",
        List.of(
            "CONVERSATION_HISTORY",
            "TRAINING_ENABLED",
            "BATCH_SIZE",
            "CHECKPOINT_INTERVAL",
            "GRADIENT_ACCUMULATION_STEPS"));
  }

  /** What an empty value means where it is not "nothing". */
  private static final Map<String, String> EMPTY_MEANS = Map.ofEntries(
      Map.entry("MAX_CONCURRENT_REQUESTS", "by plan"),
      Map.entry("MAX_MODEL_SIZE_GB", "by plan"),
      Map.entry("BATCH_SIZE", "by plan for training, 256 prompt tokens per pass"),
      Map.entry("WORKER_PROCESSES", "one per core per model, each organization's share by plan"),
      Map.entry("ENGRAM_BANDWIDTH_MBPS", "no limit beyond the plans' own"),
      Map.entry("KV_CACHE_SIZE_GB", "GPU_MEMORY_FRACTION of native memory less the weights"),
      Map.entry("DATABASE_URL", "sqlite in ENGRAM_DATA_DIR"),
      Map.entry("REDIS_URL", "limits counted by each node"),
      Map.entry("OTEL_EXPORTER_OTLP_ENDPOINT", "none: no traces are sent"),
      Map.entry("DEFAULT_MODEL", "none: requests name one"),
      Map.entry("ENGRAM_ADMIN_KEY", "none"),
      Map.entry("ENGRAM_SECRET_KEY", "key file in ENGRAM_DATA_DIR"),
      Map.entry("ENGRAM_STORAGE_DIR", "instances in ENGRAM_DATA_DIR"),
      Map.entry("ENGRAM_BACKUP_DIR", "backups in ENGRAM_DATA_DIR"),
      Map.entry("ENGRAM_S3_ENDPOINT", "AWS by region"),
      Map.entry("ENGRAM_GCS_ENDPOINT", "Google's"),
      Map.entry("ENGRAM_AZURE_BLOB_ENDPOINT", "Azure's"));

  private ConfigSummary() {}

  /** Group name to "NAME=value" entries, in a stable order; "unused" lists what this build ignores. */
  public static Map<String, List<String>> of(EngramConfig config) {
    Map<String, String> shown = config.redactedValues();
    Set<String> set = config.fromEnvironment();
    Map<String, List<String>> summary = new LinkedHashMap<>();
    List<String> grouped = new ArrayList<>();
    GROUPS.forEach((group, names) -> {
      List<String> entries = new ArrayList<>();
      for (String name : names) {
        grouped.add(name);
        if (inEffect(name, config)) {
          String value = name.equals("MODEL_CACHE_DIR")
              ? config.inference().modelCacheDir().toString()
              : shown.get(name);
          if (value.isEmpty()) {
            value = "(" + EMPTY_MEANS.getOrDefault(name, "empty") + ")";
          }
          entries.add(name + "=" + value + (set.contains(name) ? " (set)" : ""));
        }
      }
      summary.put(group, entries);
    });
    List<String> unused = new ArrayList<>();
    shown.forEach((name, value) -> {
      if (!grouped.contains(name) && set.contains(name)) {
        unused.add(name + "=" + value);
      }
    });
    if (!unused.isEmpty()) {
      summary.put("set but not used by this build", unused);
    }
    return summary;
  }

  private static boolean inEffect(String name, EngramConfig config) {
    boolean upstream = config.inference().upstream().isPresent();
    boolean webSockets = config.inference().webSockets().enabled();
    return switch (name) {
      case "LOG_FILE_PATH" -> config.logging().destination().equals("file");
      case "ENGRAM_SLOT_LEASE_SECONDS" -> !config.values().get("REDIS_URL").isEmpty();
      case "ENGRAM_SOLR_URL",
          "ENGRAM_SOLR_COLLECTION",
          "ENGRAM_SOLR_SHARDS",
          "ENGRAM_SOLR_REPLICAS",
          "ENGRAM_SOLR_USERNAME",
          "ENGRAM_SOLR_PASSWORD",
          "ENGRAM_SOLR_TIMEOUT_MS" -> config.memoryIndex().solr();
      case "ENGRAM_UPSTREAM_API_KEY", "ENGRAM_UPSTREAM_MODEL", "ENGRAM_UPSTREAM_CONTEXT_LENGTH" ->
        upstream;
      case "ENGRAM_WEBSOCKET_MAX_CONNECTIONS",
          "ENGRAM_WEBSOCKET_IDLE_TIMEOUT",
          "ENGRAM_WEBSOCKET_AUTH_TIMEOUT" -> webSockets;
      case "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER" -> true;
      default -> !name.startsWith("OTEL_") || config.tracing().exports();
    };
  }
}
