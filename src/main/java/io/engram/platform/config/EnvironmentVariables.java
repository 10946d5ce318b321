package io.engram.platform.config;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The variables this service reads, with the spec's defaults and ranges, plus Engram's own
 * ({@code ENGRAM_*}, {@code DATABASE_URL}). Defaults written "by plan" or "auto" in the spec are
 * empty here: the plan table or the runtime supplies them.
 */
public final class EnvironmentVariables {

  private static final Map<String, VariableSpec> SPECS = new LinkedHashMap<>();

  static {
    add(VariableSpec.integer("API_PORT", "8000", 1024, 65535, "HTTP port"));
    add(VariableSpec.string("API_HOST", "0.0.0.0", "address to bind"));
    add(VariableSpec.integer(
        "API_TLS_PORT",
        "",
        1,
        65535,
        "HTTPS port: TLS 1.3 and HTTP/2, certificates by SNI (empty: no TLS listener)"));
    add(
        VariableSpec.path(
            "ENGRAM_TLS_CERTIFICATE",
            "",
            "PEM certificate chain for the server's own names (empty: self-signed, kept in <ENGRAM_DATA_DIR>/tls)"));
    add(VariableSpec.path(
        "ENGRAM_TLS_PRIVATE_KEY", "", "PEM private key of ENGRAM_TLS_CERTIFICATE"));
    add(VariableSpec.bool(
        "ENGRAM_TLS_ALLOW_TLS12", "false", "also accept TLS 1.2 clients on API_TLS_PORT"));
    add(VariableSpec.csv(
        "ENGRAM_SERVER_NAMES",
        "localhost",
        "the server's own host names: its default certificate's names, never a custom domain"));
    add(VariableSpec.csv(
        "ENGRAM_TRUSTED_PROXIES",
        "",
        "CIDRs of proxies whose X-Forwarded-For is believed for the IP allowlist"));
    add(VariableSpec.string(
        "ENGRAM_DNS_RESOLVER",
        "",
        "DNS server (host or host:port) for custom-domain TXT checks (empty: the system's)"));
    add(VariableSpec.integer(
        "ENGRAM_DOMAIN_CHECK_SECONDS",
        "60",
        1,
        86_400,
        "seconds between TXT checks of a pending custom domain (verified ones: every 6 hours)"));
    add(VariableSpec.bool(
        "API_KEY_REQUIRED",
        "true",
        "require a credential on every route (see docs/auth.md for what false relaxes)"));
    add(VariableSpec.string(
        "ENGRAM_OPEN_ORGANIZATION",
        "",
        "with API_KEY_REQUIRED=false: the organization whose inference routes answer requests"
            + " that carry no credential (a single-organization deployment behind its own"
            + " network boundary)"));
    add(VariableSpec.oneOf(
        "LOG_LEVEL",
        "INFO",
        List.of("debug", "info", "warning", "error", "critical"),
        "log threshold"));
    add(VariableSpec.oneOf(
        "LOG_FORMAT", "json", List.of("json", "text", "structured"), "log line format"));
    add(VariableSpec.oneOf(
        "LOG_DESTINATION", "stdout", List.of("stdout", "file", "syslog"), "where logs go"));
    add(VariableSpec.path(
        "LOG_FILE_PATH", "/var/log/engram/app.log", "log file when LOG_DESTINATION=file"));
    add(VariableSpec.csv("CORS_ORIGINS", "*", "allowed browser origins, comma-separated"));
    add(VariableSpec.integer(
        "RATE_LIMIT_REQUESTS", "100", 1, 1_000_000, "default requests per minute per key"));
    add(VariableSpec.integer(
        "REQUEST_TIMEOUT", "120", 10, 600, "seconds before an idle request is cut"));
    add(VariableSpec.integer(
        "MAX_CONCURRENT_REQUESTS",
        "",
        1,
        1000,
        "concurrent requests per organization (default by plan)"));
    add(
        VariableSpec.path(
            "ENGRAM_BACKUP_DIR",
            "",
            "where automatic backups go (default <ENGRAM_DATA_DIR>/backups; another volume is better)"));
    add(VariableSpec.integer(
        "ENGRAM_BACKUP_INTERVAL_HOURS", "6", 1, 168, "hours between automatic backups"));
    add(
        VariableSpec.path(
            "ENGRAM_STORAGE_DIR",
            "",
            "instances' files (default <ENGRAM_DATA_DIR>/instances; nodes sharing a database share it)"));
    add(VariableSpec.integer(
        "ENGRAM_FINE_TUNING_JOBS_PER_NODE",
        "1",
        1,
        16,
        "fine-tuning jobs one node trains at once"));
    add(VariableSpec.integer(
        "ENGRAM_FINE_TUNING_LEASE_SECONDS",
        "30",
        2,
        600,
        "how long a stopped node holds its fine-tuning jobs before another node resumes them"));
    add(VariableSpec.bool(
        "ENGRAM_FINE_TUNING_UPSTREAM",
        "false",
        "fine-tune the upstream's models through its OpenAI-compatible fine-tuning API"));
    add(VariableSpec.integer(
        "ENGRAM_FINE_TUNING_UPSTREAM_POLL_MILLIS",
        "5000",
        50,
        600_000,
        "how often an upstream fine-tuning job is looked at"));
    add(VariableSpec.path(
        "ENGRAM_TORCH_CACHE_DIR",
        "",
        "where the trainer unpacks libtorch, ~430 MB once (default ~/.cache/engram/pytorch)"));
    add(VariableSpec.string(
        "ENGRAM_S3_ENDPOINT",
        "",
        "S3 endpoint for every instance's S3 stores, path-style (default: AWS by region)"));
    add(VariableSpec.string(
        "ENGRAM_GCS_ENDPOINT",
        "",
        "Cloud Storage endpoint for every instance's GCS stores (default: Google's)"));
    add(
        VariableSpec.string(
            "ENGRAM_AZURE_BLOB_ENDPOINT",
            "",
            "Blob endpoint, {account} for the account name (default: https://{account}.blob.core.windows.net)"));
    add(VariableSpec.integer(
        "ENGRAM_BANDWIDTH_MBPS",
        "",
        1,
        1_000_000,
        "each organization's bandwidth where the plan leaves it to the deployment (Boost and"
            + " above), in megabits per second; empty: no limit"));
    add(VariableSpec.path(
        "MODEL_CACHE_DIR", "", "model directory (default <ENGRAM_DATA_DIR>/models)"));
    add(VariableSpec.integer(
        "WORKER_PROCESSES",
        "",
        1,
        16,
        "in-process generations at once per model, and each organization's share (default: one"
            + " per core; shares by plan)"));
    add(VariableSpec.string(
        "DEFAULT_MODEL", "", "the client-facing model id; empty: the request must name one"));
    add(VariableSpec.bool(
        "MODEL_AUTO_DOWNLOAD",
        "true",
        "fetch DEFAULT_MODEL from the Hugging Face Hub at start when it is owner/name and absent"));
    add(VariableSpec.string(
        "HF_ENDPOINT",
        "https://huggingface.co",
        "the Hugging Face Hub or a mirror, for downloads"));
    add(VariableSpec.string(
        "HF_TOKEN", "", "token for gated or private Hugging Face models (never printed)"));
    add(VariableSpec.integer(
        "MAX_MODEL_SIZE_GB", "", 1, 10_000, "largest model upload (default by plan)"));
    add(VariableSpec.oneOf(
        "MODEL_QUANTIZATION",
        "none",
        List.of("none", "int8", "int4", "gptq", "awq"),
        "the in-process engine's weights: int4 quantizes at load (int8, gptq, awq: refused)"));
    add(VariableSpec.integer(
        "BATCH_SIZE",
        "",
        1,
        256,
        "training batch (default by plan), prompt tokens per forward pass (default 256)"));
    add(VariableSpec.decimal(
        "GPU_MEMORY_FRACTION",
        "0.9",
        0.1,
        1.0,
        "share of the JVM's native memory for the in-process engine's weights and KV cache"));
    add(VariableSpec.bool(
        "ENABLE_FLASH_ATTENTION",
        "true",
        "prompt in BATCH_SIZE tiles (false: one token per forward pass)"));
    add(VariableSpec.integer(
        "KV_CACHE_SIZE_GB",
        "",
        1,
        10_000,
        "the in-process engine's KV cache (default: by GPU_MEMORY_FRACTION)"));
    add(VariableSpec.bool("TRAINING_ENABLED", "true", "allow fine-tuning jobs"));
    add(VariableSpec.bool(
        "CONVERSATION_HISTORY",
        "true",
        "keep each chat exchange in the organization's default instance (docs/storage.md)"));
    add(VariableSpec.integer(
        "CHECKPOINT_INTERVAL", "1000", 1, 10_000_000, "training checkpoint interval in steps"));
    add(VariableSpec.integer(
        "GRADIENT_ACCUMULATION_STEPS", "4", 1, 1024, "training gradient accumulation"));

    add(VariableSpec.path(
        "ENGRAM_DATA_DIR", "./data", "data directory: SQLite file, index, models"));
    add(VariableSpec.string(
        "DATABASE_URL", "", "empty: SQLite in the data dir; postgresql://... : PostgreSQL"));
    add(VariableSpec.string(
        "REDIS_URL",
        "",
        "empty: limits counted by each node; redis://host:6379: rate limits shared by every node"));
    add(VariableSpec.oneOf(
        "ENGRAM_MEMORY_INDEX",
        "lucene",
        List.of("lucene", "solr"),
        "the memory index: lucene (embedded, a copy on each node) or solr (one SolrCloud"
            + " collection shared by every node, sharded by organization)"));
    add(VariableSpec.string(
        "ENGRAM_SOLR_URL",
        "",
        "with ENGRAM_MEMORY_INDEX=solr: the Solr nodes' base URLs, comma-separated"
            + " (http://solr-1:8983/solr,http://solr-2:8983/solr)"));
    add(VariableSpec.string(
        "ENGRAM_SOLR_COLLECTION", "engram-memory", "the Solr alias of the memory collection"));
    add(VariableSpec.integer(
        "ENGRAM_SOLR_SHARDS", "2", 1, 1024, "shards of a memory collection Engram creates"));
    add(VariableSpec.integer(
        "ENGRAM_SOLR_REPLICAS",
        "2",
        1,
        16,
        "replicas of each shard of a collection Engram creates"));
    add(VariableSpec.string("ENGRAM_SOLR_USERNAME", "", "Solr basic-auth user (empty: none)"));
    add(VariableSpec.string("ENGRAM_SOLR_PASSWORD", "", "Solr basic-auth password"));
    add(VariableSpec.integer(
        "ENGRAM_SOLR_TIMEOUT_MS",
        "5000",
        100,
        120000,
        "how long one Solr request may take, over all the nodes it tries"));
    add(VariableSpec.integer(
        "ENGRAM_SLOT_LEASE_SECONDS",
        "15",
        2,
        300,
        "with REDIS_URL: how long a node that died keeps its concurrency slots"));
    add(VariableSpec.string(
        "ENGRAM_ADMIN_KEY", "", "account-level key accepted as given (at least 24 characters)"));
    add(VariableSpec.string(
        "ENGRAM_SECRET_KEY",
        "",
        "32-byte key (64 hex characters) sealing stored secrets; empty: <ENGRAM_DATA_DIR>/secret.key, "
            + "created on first start (every node sharing a database needs the same key)"));
    add(VariableSpec.integer(
        "ENGRAM_ALERT_INTERVAL_SECONDS",
        "15",
        1,
        300,
        "how often alert conditions are evaluated (an alert fires within a minute at 15)"));
    add(VariableSpec.integer(
        "ENGRAM_ASSISTANT_MAX_TOOL_STEPS",
        "5",
        1,
        20,
        "rounds of capability calls a model may make in one message of a conversation as an "
            + "assistant (then it must answer in words)"));
    add(VariableSpec.integer(
        "ENGRAM_WEBHOOK_RETRY_MILLIS",
        "5000",
        10,
        600_000,
        "wait before an alert webhook's first retry (the second waits four times as long)"));
    add(VariableSpec.integer(
        "ENGRAM_MAX_BODY_BYTES", "1048576", 1024, 1L << 30, "largest JSON request body"));
    add(VariableSpec.integer(
        "ENGRAM_SESSION_TTL_MINUTES", "720", 5, 43_200, "signed-in session lifetime"));
    add(VariableSpec.bool(
        "ENGRAM_COOKIE_SECURE", "false", "mark session cookies Secure (set true behind HTTPS)"));
    add(
        VariableSpec.bool(
            "ENGRAM_REFLECTION_SCHEDULER",
            "true",
            "run reflection on each organization's schedule from this node (false: only runs started through the route)"));
    add(
        VariableSpec.string(
            "ENGRAM_UPSTREAM_URL",
            "",
            "OpenAI-compatible server to generate with, base URL including /v1 (empty: local models only)"));
    add(VariableSpec.string(
        "ENGRAM_UPSTREAM_API_KEY", "", "key sent to the upstream as 'Authorization: Bearer'"));
    add(VariableSpec.string(
        "ENGRAM_UPSTREAM_MODEL",
        "",
        "model name sent upstream (empty: the client's model id is sent as is)"));
    add(VariableSpec.integer(
        "ENGRAM_UPSTREAM_CONTEXT_LENGTH",
        "8192",
        256,
        10_000_000,
        "context length of the upstream model, in tokens"));
    add(VariableSpec.integer(
        "ENGRAM_STREAM_KEEPALIVE_SECONDS",
        "15",
        1,
        300,
        "silence after which a stream gets a keep-alive comment"));
    add(VariableSpec.bool(
        "ENGRAM_WEBSOCKET_ENABLED", "true", "serve /ws and /v1/chat/stream (websocket.enabled)"));
    add(VariableSpec.integer(
        "ENGRAM_WEBSOCKET_MAX_CONNECTIONS",
        "1000",
        1,
        1_000_000,
        "open WebSocket connections per node (websocket.max_connections)"));
    add(VariableSpec.integer(
        "ENGRAM_WEBSOCKET_IDLE_TIMEOUT",
        "300",
        5,
        86_400,
        "seconds a WebSocket may stay silent before it is closed (websocket.idle_timeout)"));
    add(VariableSpec.integer(
        "ENGRAM_WEBSOCKET_AUTH_TIMEOUT",
        "10",
        1,
        300,
        "seconds a new WebSocket has to authenticate"));
    add(VariableSpec.integer(
        "ENGRAM_SHUTDOWN_GRACE_SECONDS", "10", 0, 300, "time in-flight requests get on shutdown"));
    add(VariableSpec.integer(
        "ENGRAM_RESPONSE_CACHE_MB",
        "256",
        1,
        1_048_576,
        "what the response cache's answers may take on this node, all organizations together"));
    tracing();
  }

  /**
   * OpenTelemetry's own variables for traces, with its defaults (the SDK's environment
   * specification): traces are sent only when an OTLP endpoint is set. The signal's own
   * ({@code OTEL_EXPORTER_OTLP_TRACES_*}) wins over the general one.
   */
  private static void tracing() {
    add(VariableSpec.bool("OTEL_SDK_DISABLED", "false", "true: no traces, whatever else is set"));
    add(VariableSpec.oneOf(
        "OTEL_TRACES_EXPORTER", "otlp", List.of("otlp", "none"), "where traces go"));
    for (String signal : List.of("", "TRACES_")) {
      String prefix = "OTEL_EXPORTER_OTLP_" + signal;
      add(VariableSpec.string(
          prefix + "ENDPOINT",
          "",
          signal.isEmpty()
              ? "OTLP/HTTP collector (http[s]://host:4318); traces go to <it>/v1/traces; empty: "
                  + "no traces"
              : "the traces' own OTLP/HTTP URL, used as given (wins over the general one)"));
      add(VariableSpec.oneOf(
          prefix + "PROTOCOL",
          "",
          List.of("http/protobuf"),
          "OTLP's transport: http/protobuf (gRPC is not carried)"));
      add(VariableSpec.string(
          prefix + "HEADERS", "", "headers sent to the collector: name=value,name=value"));
      add(VariableSpec.integer(
          prefix + "TIMEOUT", "", 1, 600_000, "milliseconds an export may take (10000)"));
      add(VariableSpec.oneOf(
          prefix + "COMPRESSION", "", List.of("none", "gzip"), "the exports' compression"));
    }
    add(VariableSpec.string(
        "OTEL_SERVICE_NAME",
        "",
        "the traces' service.name (empty: OTEL_RESOURCE_ATTRIBUTES' service.name, else engram)"));
    add(VariableSpec.string(
        "OTEL_RESOURCE_ATTRIBUTES", "", "more resource attributes: key=value,key=value"));
    add(
        VariableSpec.oneOf(
            "OTEL_TRACES_SAMPLER",
            "parentbased_always_on",
            List.of(
                "always_on",
                "always_off",
                "traceidratio",
                "parentbased_always_on",
                "parentbased_always_off",
                "parentbased_traceidratio"),
            "which requests are traced (a client's sampled traceparent is followed under parentbased_*)"));
    add(VariableSpec.decimal(
        "OTEL_TRACES_SAMPLER_ARG", "1.0", 0, 1, "the share of traces the ratio samplers keep"));
    add(VariableSpec.integer(
        "OTEL_BSP_SCHEDULE_DELAY", "5000", 1, 3_600_000, "milliseconds between exports"));
    add(VariableSpec.integer(
        "OTEL_BSP_EXPORT_TIMEOUT", "30000", 1, 3_600_000, "milliseconds an export may take"));
    add(VariableSpec.integer(
        "OTEL_BSP_MAX_QUEUE_SIZE",
        "2048",
        1,
        1_000_000,
        "spans waiting for export; more are dropped and counted, never waited for"));
    add(VariableSpec.integer(
        "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "512", 1, 1_000_000, "spans per export"));
    add(VariableSpec.integer(
        "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT",
        "65536",
        1,
        100_000_000,
        "the longest attribute value (message contents are cut to it)"));
  }

  private EnvironmentVariables() {}

  private static void add(VariableSpec spec) {
    SPECS.put(spec.name(), spec);
  }

  public static Optional<VariableSpec> spec(String name) {
    return Optional.ofNullable(SPECS.get(name));
  }

  public static Iterable<VariableSpec> all() {
    return SPECS.values();
  }
}
