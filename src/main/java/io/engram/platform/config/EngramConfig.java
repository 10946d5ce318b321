package io.engram.platform.config;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeSet;

/**
 * The service's start-up configuration, read once from the environment and parsed once into
 * typed groups. Every value is checked against {@link EnvironmentVariables}; all problems are
 * reported together so an operator fixes them in one pass.
 */
public record EngramConfig(
    Server server,
    Access access,
    Logging logging,
    Storage storage,
    Inference inference,
    boolean reflectionScheduler,
    Monitoring monitoring,
    Edge edge,
    Cluster cluster,
    FineTuning fineTuning,
    Map<String, String> values,
    Set<String> fromEnvironment) {

  /** The HTTP server: where it listens, what it accepts, how long it waits. */
  public record Server(
      int port,
      String host,
      long maxBodyBytes,
      List<String> corsOrigins,
      int requestTimeoutSeconds,
      int shutdownGraceSeconds) {}

  /** Credentials and sessions: whether one is required, the operator key, default limits. */
  public record Access(
      boolean apiKeyRequired,
      String adminKey,
      int rateLimitRequests,
      int sessionTtlMinutes,
      boolean cookieSecure,
      String openOrganization,
      OptionalInt deploymentBandwidthMbps) {
    @Override
    public String toString() {
      return "Access[apiKeyRequired=" + apiKeyRequired + ", adminKey="
          + (adminKey.isEmpty() ? "" : "<set>") + "]";
    }
  }

  /** LOG_LEVEL, LOG_FORMAT and LOG_DESTINATION lower-cased; the file for LOG_DESTINATION=file. */
  public record Logging(String level, String format, String destination, Path filePath) {}

  /**
   * Where data lives, and the key that seals stored secrets: {@code secretKey} is the 32 bytes of
   * ENGRAM_SECRET_KEY, or empty for the key file in the data directory.
   */
  public record Storage(
      Path dataDir,
      String databaseUrl,
      Optional<byte[]> secretKey,
      Path instancesDir,
      Path backupDir,
      Duration backupInterval,
      ObjectStoreEndpoints objectStores) {
    public boolean usesPostgres() {
      return !databaseUrl.isEmpty();
    }

    @Override
    public String toString() {
      return "Storage[" + dataDir + ", " + (usesPostgres() ? "postgresql" : "sqlite") + "]";
    }
  }

  /**
   * The gateway: models and engines, limits, streams. Empty optionals leave the value to the
   * organization's plan (concurrency, upload size) or to the runtime (workers).
   */
  public record Inference(
      Path modelCacheDir,
      String defaultModel,
      OptionalInt maxConcurrentRequests,
      OptionalInt workerProcesses,
      OptionalInt maxModelSizeGb,
      int streamKeepAliveSeconds,
      Optional<Upstream> upstream,
      WebSocketSettings webSockets,
      int assistantMaxToolSteps,
      LocalEngineSettings local) {}

  /**
   * The in-process engine's settings (docs/configuration.md, "The in-process engine"):
   * MODEL_QUANTIZATION (none, or int4 at load), KV_CACHE_SIZE_GB (empty: what
   * GPU_MEMORY_FRACTION of the JVM's native memory leaves after the weights), ENABLE_FLASH_ATTENTION
   * and BATCH_SIZE (prompt tokens per forward pass; empty: the engine's default).
   */
  public record LocalEngineSettings(
      String quantization,
      OptionalInt kvCacheGb,
      double memoryFraction,
      boolean flashAttention,
      OptionalInt batchSize,
      boolean autoDownload,
      URI hubEndpoint,
      String hubToken) {
    @Override
    public String toString() {
      return "LocalEngineSettings[" + quantization + ", hub=" + hubEndpoint + "]";
    }
  }

  /** An OpenAI-compatible server: base URL (with /v1), its key, the model name it knows, its context. */
  public record Upstream(URI baseUrl, String apiKey, String model, int contextLength) {
    @Override
    public String toString() {
      return "Upstream[" + baseUrl + ", model=" + model + "]";
    }
  }

  /** The WebSocket endpoints' settings (the spec's websocket.enabled, max_connections, idle_timeout). */
  /** Alerts: how often conditions are evaluated, and the first wait before a webhook retry. */
  public record Monitoring(Duration alertInterval, Duration webhookRetry) {}

  /**
   * The network edge the operator sets: the server's own names and TLS listener, the proxies whose
   * X-Forwarded-For is believed, and the custom domains' TXT checks.
   *
   * @param tlsPort the TLS listener's port (empty: none; 0 in tests: any free port)
   * @param trustedProxies CIDRs, parsed where addresses are read (a bad one stops the start)
   */
  public record Edge(
      OptionalInt tlsPort,
      boolean allowTls12,
      String certificateFile,
      String privateKeyFile,
      Set<String> serverNames,
      List<String> trustedProxies,
      String dnsResolver,
      Duration domainCheckInterval) {}

  /**
   * Sharing with other nodes: Redis (empty: each node counts its own limits) and how long a node
   * that died keeps its concurrency slots there.
   */
  public record Cluster(String redisUrl, Duration slotLease) {
    @Override
    public String toString() {
      return "Cluster[redis=" + (redisUrl.isEmpty() ? "none" : "<set>") + "]";
    }
  }

  /**
   * Fine-tuning on this node: jobs trained at once, the lease another node waits out, where
   * libtorch is unpacked (empty: the trainer's default), and whether the upstream fine-tunes.
   */
  public record FineTuning(
      int jobsPerNode,
      Duration lease,
      Optional<Path> torchCacheDir,
      boolean upstream,
      Duration upstreamPoll) {}

  public record WebSocketSettings(
      boolean enabled, int maxConnections, Duration idleTimeout, Duration authTimeout) {}

  private static Optional<byte[]> secretKey(Map<String, String> values, List<String> problems) {
    String text = values.getOrDefault("ENGRAM_SECRET_KEY", "").trim();
    if (text.isEmpty()) {
      return Optional.empty();
    }
    if (!text.matches("[0-9a-fA-F]{64}")) {
      problems.add("ENGRAM_SECRET_KEY must be 64 hexadecimal characters (32 bytes; for example "
          + "the output of 'openssl rand -hex 32')");
      return Optional.empty();
    }
    return Optional.of(java.util.HexFormat.of().parseHex(text));
  }

  /** Reads and validates the given environment (normally {@code System.getenv()}). */
  public static EngramConfig fromEnvironment(Map<String, String> env) {
    return parse(env, false);
  }

  private static EngramConfig parse(Map<String, String> env, boolean ephemeralPortAllowed) {
    List<String> problems = new ArrayList<>();
    Map<String, String> values = new LinkedHashMap<>();
    Set<String> fromEnvironment = new TreeSet<>();
    for (VariableSpec spec : EnvironmentVariables.all()) {
      String raw = env.get(spec.name());
      if (raw == null || raw.isBlank()) {
        values.put(spec.name(), spec.defaultValue());
        continue;
      }
      fromEnvironment.add(spec.name());
      boolean ephemeralPort = ephemeralPortAllowed
          && (spec.name().equals("API_PORT") || spec.name().equals("API_TLS_PORT"))
          && raw.trim().equals("0");
      spec.check(raw)
          .filter(problem -> !ephemeralPort)
          .ifPresentOrElse(problems::add, () -> values.put(spec.name(), raw.trim()));
    }
    checkTogether(values, problems);
    Optional<byte[]> secretKey = secretKey(values, problems);
    if (!problems.isEmpty()) {
      throw new ConfigException(problems);
    }
    Path dataDir = Path.of(values.get("ENGRAM_DATA_DIR"));
    return new EngramConfig(
        new Server(
            integer(values, "API_PORT"),
            values.get("API_HOST"),
            Long.parseLong(values.get("ENGRAM_MAX_BODY_BYTES")),
            csv(values.get("CORS_ORIGINS")),
            integer(values, "REQUEST_TIMEOUT"),
            integer(values, "ENGRAM_SHUTDOWN_GRACE_SECONDS")),
        new Access(
            bool(values.get("API_KEY_REQUIRED")),
            values.get("ENGRAM_ADMIN_KEY"),
            integer(values, "RATE_LIMIT_REQUESTS"),
            integer(values, "ENGRAM_SESSION_TTL_MINUTES"),
            bool(values.get("ENGRAM_COOKIE_SECURE")),
            values.get("ENGRAM_OPEN_ORGANIZATION"),
            optionalInteger(values, "ENGRAM_BANDWIDTH_MBPS")),
        new Logging(
            lower(values, "LOG_LEVEL"),
            lower(values, "LOG_FORMAT"),
            lower(values, "LOG_DESTINATION"),
            Path.of(values.get("LOG_FILE_PATH"))),
        new Storage(
            dataDir,
            values.get("DATABASE_URL"),
            secretKey,
            values.get("ENGRAM_STORAGE_DIR").isEmpty()
                ? dataDir.resolve("instances")
                : Path.of(values.get("ENGRAM_STORAGE_DIR")),
            values.get("ENGRAM_BACKUP_DIR").isEmpty()
                ? dataDir.resolve("backups")
                : Path.of(values.get("ENGRAM_BACKUP_DIR")),
            Duration.ofHours(integer(values, "ENGRAM_BACKUP_INTERVAL_HOURS")),
            new ObjectStoreEndpoints(
                values.get("ENGRAM_S3_ENDPOINT"),
                values.get("ENGRAM_GCS_ENDPOINT"),
                values.get("ENGRAM_AZURE_BLOB_ENDPOINT"))),
        inference(values, dataDir),
        bool(values.get("ENGRAM_REFLECTION_SCHEDULER")),
        new Monitoring(
            Duration.ofSeconds(integer(values, "ENGRAM_ALERT_INTERVAL_SECONDS")),
            Duration.ofMillis(integer(values, "ENGRAM_WEBHOOK_RETRY_MILLIS"))),
        edge(values),
        new Cluster(
            values.get("REDIS_URL"),
            Duration.ofSeconds(integer(values, "ENGRAM_SLOT_LEASE_SECONDS"))),
        new FineTuning(
            integer(values, "ENGRAM_FINE_TUNING_JOBS_PER_NODE"),
            Duration.ofSeconds(integer(values, "ENGRAM_FINE_TUNING_LEASE_SECONDS")),
            optionalPath(values, "ENGRAM_TORCH_CACHE_DIR"),
            bool(values.get("ENGRAM_FINE_TUNING_UPSTREAM")),
            Duration.ofMillis(integer(values, "ENGRAM_FINE_TUNING_UPSTREAM_POLL_MILLIS"))),
        Map.copyOf(values),
        Set.copyOf(fromEnvironment));
  }

  /** Rules beyond a single variable's type and range. */
  private static void checkTogether(Map<String, String> values, List<String> problems) {
    problems.addAll(TracingSettings.problems(values));
    problems.addAll(MemoryIndexSettings.problems(values));
    if (!isHttpUrl(values.getOrDefault("HF_ENDPOINT", ""))) {
      problems.add("HF_ENDPOINT must be an http:// or https:// URL (the Hugging Face Hub, "
          + "https://huggingface.co, or a mirror)");
    }
    if (values.getOrDefault("HF_TOKEN", "").chars().anyMatch(c -> c < 0x21 || c == 0x7f)) {
      problems.add("HF_TOKEN must not contain spaces or control characters");
    }
    String quantization = values.getOrDefault("MODEL_QUANTIZATION", "none");
    if (quantization.equals("int8")) {
      problems.add("MODEL_QUANTIZATION=int8 cannot be served: the in-process engine (jlama) has no"
          + " matrix product for int8 weights. Use int4 (quantized at load: the layers' weights in"
          + " about a sixth of their F32 memory) or none; an int8 model is served by its own"
          + " server (vLLM, TGI) added as a provider");
    }
    if (quantization.equals("gptq") || quantization.equals("awq")) {
      problems.add("MODEL_QUANTIZATION=" + quantization
          + " names weights quantized ahead of time by "
          + quantization.toUpperCase(java.util.Locale.ROOT) + ", which the in-process engine cannot"
          + " read; it quantizes at load with int4 (or none). Serve a "
          + quantization.toUpperCase(java.util.Locale.ROOT) + " model from its own server (vLLM,"
          + " TGI) added as a provider, and leave MODEL_QUANTIZATION for the in-process engine");
    }
    if (!values.get("ENGRAM_OPEN_ORGANIZATION").isEmpty() && bool(values.get("API_KEY_REQUIRED"))) {
      problems.add("ENGRAM_OPEN_ORGANIZATION opens an organization's inference routes without a"
          + " key, which needs API_KEY_REQUIRED=false; it is true (the default)");
    }
    for (String endpoint :
        List.of("ENGRAM_S3_ENDPOINT", "ENGRAM_GCS_ENDPOINT", "ENGRAM_AZURE_BLOB_ENDPOINT")) {
      String value = values.get(endpoint);
      if (!value.isEmpty() && !value.matches("^https?://[^\\s/?#]+(/[^\\s?#]*)?$")) {
        problems.add(endpoint + " must be an http:// or https:// URL without query");
      }
    }
    if (values.get("ENGRAM_TLS_CERTIFICATE").isEmpty()
        != values.get("ENGRAM_TLS_PRIVATE_KEY").isEmpty()) {
      problems.add(
          "ENGRAM_TLS_CERTIFICATE and ENGRAM_TLS_PRIVATE_KEY are set together or not at all");
    }
    String redis = values.get("REDIS_URL");
    if (!redis.isEmpty() && !redis.matches("^rediss?://[^\\s]+$")) {
      problems.add("REDIS_URL must be empty or a Redis URL (redis://[:password@]host:6379[/db] or "
          + "rediss://...)");
    }
    String adminKey = values.get("ENGRAM_ADMIN_KEY");
    if (!adminKey.isEmpty()
        && (adminKey.length() < 24 || adminKey.chars().anyMatch(Character::isWhitespace))) {
      problems.add("ENGRAM_ADMIN_KEY must be at least 24 characters without spaces");
    }
    String databaseUrl = values.get("DATABASE_URL");
    if (!databaseUrl.isEmpty() && !isPostgresUrl(databaseUrl)) {
      problems.add("DATABASE_URL must be empty (SQLite in ENGRAM_DATA_DIR) or a PostgreSQL URL "
          + "(postgresql://user:password@host:5432/db or jdbc:postgresql://...)");
    }
    String upstream = values.get("ENGRAM_UPSTREAM_URL");
    if (!upstream.isEmpty() && !isHttpUrl(upstream)) {
      problems.add(
          "ENGRAM_UPSTREAM_URL must be an http:// or https:// base URL including /v1, got '"
              + upstream + "'");
    }
    if (values.get("ENGRAM_UPSTREAM_API_KEY").chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
      // It goes into a header line; a line break inside it would break every upstream call.
      problems.add(
          "ENGRAM_UPSTREAM_API_KEY must not contain control characters such as a line break");
    }
  }

  private static Inference inference(Map<String, String> values, Path dataDir) {
    String modelDir = values.get("MODEL_CACHE_DIR");
    String upstreamUrl = values.get("ENGRAM_UPSTREAM_URL");
    Optional<Upstream> upstream = upstreamUrl.isEmpty()
        ? Optional.empty()
        : Optional.of(new Upstream(
            URI.create(upstreamUrl),
            values.get("ENGRAM_UPSTREAM_API_KEY"),
            values.get("ENGRAM_UPSTREAM_MODEL"),
            integer(values, "ENGRAM_UPSTREAM_CONTEXT_LENGTH")));
    WebSocketSettings webSockets = new WebSocketSettings(
        bool(values.get("ENGRAM_WEBSOCKET_ENABLED")),
        integer(values, "ENGRAM_WEBSOCKET_MAX_CONNECTIONS"),
        Duration.ofSeconds(integer(values, "ENGRAM_WEBSOCKET_IDLE_TIMEOUT")),
        Duration.ofSeconds(integer(values, "ENGRAM_WEBSOCKET_AUTH_TIMEOUT")));
    return new Inference(
        modelDir.isEmpty() ? dataDir.resolve("models") : Path.of(modelDir),
        values.get("DEFAULT_MODEL"),
        optionalInteger(values, "MAX_CONCURRENT_REQUESTS"),
        optionalInteger(values, "WORKER_PROCESSES"),
        optionalInteger(values, "MAX_MODEL_SIZE_GB"),
        integer(values, "ENGRAM_STREAM_KEEPALIVE_SECONDS"),
        upstream,
        webSockets,
        integer(values, "ENGRAM_ASSISTANT_MAX_TOOL_STEPS"),
        new LocalEngineSettings(
            values.get("MODEL_QUANTIZATION"),
            optionalInteger(values, "KV_CACHE_SIZE_GB"),
            Double.parseDouble(values.get("GPU_MEMORY_FRACTION")),
            bool(values.get("ENABLE_FLASH_ATTENTION")),
            optionalInteger(values, "BATCH_SIZE"),
            bool(values.get("MODEL_AUTO_DOWNLOAD")),
            URI.create(values.get("HF_ENDPOINT")),
            values.get("HF_TOKEN")));
  }

  private static Edge edge(Map<String, String> values) {
    return new Edge(
        optionalInteger(values, "API_TLS_PORT"),
        bool(values.get("ENGRAM_TLS_ALLOW_TLS12")),
        values.get("ENGRAM_TLS_CERTIFICATE"),
        values.get("ENGRAM_TLS_PRIVATE_KEY"),
        new java.util.LinkedHashSet<>(csv(lower(values, "ENGRAM_SERVER_NAMES"))),
        csv(values.get("ENGRAM_TRUSTED_PROXIES")),
        values.get("ENGRAM_DNS_RESOLVER"),
        Duration.ofSeconds(integer(values, "ENGRAM_DOMAIN_CHECK_SECONDS")));
  }

  private static List<String> csv(String value) {
    return Arrays.stream(value.split(","))
        .map(String::trim)
        .filter(v -> !v.isEmpty())
        .toList();
  }

  private static Optional<Path> optionalPath(Map<String, String> values, String name) {
    String value = values.get(name);
    return value.isEmpty() ? Optional.empty() : Optional.of(Path.of(value));
  }

  private static int integer(Map<String, String> values, String name) {
    return Integer.parseInt(values.get(name));
  }

  private static OptionalInt optionalInteger(Map<String, String> values, String name) {
    String value = values.get(name);
    return value.isEmpty() ? OptionalInt.empty() : OptionalInt.of(Integer.parseInt(value));
  }

  private static String lower(Map<String, String> values, String name) {
    return values.get(name).toLowerCase(Locale.ROOT);
  }

  private static boolean bool(String value) {
    return VariableSpec.parseBoolean(value).orElseThrow();
  }

  private static boolean isHttpUrl(String url) {
    try {
      URI uri = new URI(url);
      return (uri.getScheme() != null
              && (uri.getScheme().equals("http") || uri.getScheme().equals("https")))
          && uri.getHost() != null;
    } catch (URISyntaxException e) {
      return false;
    }
  }

  private static boolean isPostgresUrl(String url) {
    return url.startsWith("postgresql://")
        || url.startsWith("postgres://")
        || url.startsWith("jdbc:postgresql://");
  }

  /**
   * The same configuration with some variables replaced (programmatic overrides, validated like
   * the environment). {@code API_PORT=0}, an ephemeral port, is accepted here for tests and tools.
   */
  public EngramConfig withOverrides(Map<String, String> overrides) {
    Map<String, String> merged = new LinkedHashMap<>(values);
    merged.putAll(overrides);
    EngramConfig parsed = parse(merged, true);
    // Defaults carried over are still defaults: only the environment's and the overrides' are
    // "set".
    Set<String> set = new TreeSet<>(fromEnvironment);
    set.addAll(overrides.keySet());
    return new EngramConfig(
        parsed.server(),
        parsed.access(),
        parsed.logging(),
        parsed.storage(),
        parsed.inference(),
        parsed.reflectionScheduler(),
        parsed.monitoring(),
        parsed.edge(),
        parsed.cluster(),
        parsed.fineTuning(),
        parsed.values(),
        Set.copyOf(set));
  }

  /** What the response cache's answers may take on this node (ENGRAM_RESPONSE_CACHE_MB). */
  public long responseCacheBytes() {
    return Long.parseLong(values.get("ENGRAM_RESPONSE_CACHE_MB")) * 1024 * 1024;
  }

  /** Which engine holds the memory index, and where (ENGRAM_MEMORY_INDEX, ENGRAM_SOLR_*). */
  public MemoryIndexSettings memoryIndex() {
    return MemoryIndexSettings.of(values);
  }

  /** OpenTelemetry's variables for traces. */
  public TracingSettings tracing() {
    return TracingSettings.of(values);
  }

  /** The variables the operator set (the environment or overrides), with their values. */
  public Map<String, String> setByOperator() {
    Map<String, String> set = new LinkedHashMap<>();
    fromEnvironment.forEach(name -> set.put(name, values.get(name)));
    return set;
  }

  /** The values safe to print at start-up: secrets and database passwords are masked. */
  public Map<String, String> redactedValues() {
    Map<String, String> shown = new LinkedHashMap<>();
    values.forEach((name, value) -> {
      if (name.equals("ENGRAM_ADMIN_KEY")
          || name.equals("ENGRAM_UPSTREAM_API_KEY")
          || name.equals("HF_TOKEN")
          || name.equals("ENGRAM_SECRET_KEY")
          || name.equals("ENGRAM_SOLR_PASSWORD")
          || name.startsWith("OTEL_EXPORTER_OTLP") && name.endsWith("HEADERS")) {
        shown.put(name, value.isEmpty() ? "" : "<set>");
      } else if (name.equals("DATABASE_URL") || name.equals("REDIS_URL")) {
        shown.put(
            name,
            value
                .replaceAll("(//[^:/@]*:)[^@]*@", "$1***@")
                .replaceAll("(?i)(password=)[^&]*", "$1***"));
      } else {
        shown.put(name, value);
      }
    });
    return shown;
  }
}
