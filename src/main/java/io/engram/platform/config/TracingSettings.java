package io.engram.platform.config;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * OpenTelemetry's variables for traces as the node read them at start (their names and defaults
 * are the SDK's environment specification's). Traces are exported only when an OTLP endpoint is
 * set and neither {@code OTEL_SDK_DISABLED} nor {@code OTEL_TRACES_EXPORTER=none} says otherwise.
 *
 * @param endpoint where spans are posted (OTLP/HTTP, protobuf); null: nothing is exported
 */
public record TracingSettings(
    String endpoint,
    Map<String, String> headers,
    Duration timeout,
    String compression,
    String serviceName,
    Map<String, String> resourceAttributes,
    String sampler,
    double samplerRatio,
    Duration scheduleDelay,
    Duration exportTimeout,
    int maxQueueSize,
    int maxBatchSize,
    int maxValueLength) {

  /** What the OTLP exporter waits for one export when no timeout is set (the SDK's default). */
  static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);

  /** The settings of {@code values} (the configuration's variables, already checked). */
  public static TracingSettings of(Map<String, String> values) {
    boolean off = Boolean.parseBoolean(values.getOrDefault("OTEL_SDK_DISABLED", "false"))
        || "none".equalsIgnoreCase(values.getOrDefault("OTEL_TRACES_EXPORTER", "otlp"));
    Map<String, String> resource = pairs(values.getOrDefault("OTEL_RESOURCE_ATTRIBUTES", ""));
    return new TracingSettings(
        off ? null : endpoint(values).orElse(null),
        pairs(otlp(values, "HEADERS").orElse("")),
        otlp(values, "TIMEOUT")
            .map(ms -> Duration.ofMillis(Long.parseLong(ms)))
            .orElse(DEFAULT_TIMEOUT),
        otlp(values, "COMPRESSION").orElse("none").toLowerCase(Locale.ROOT),
        serviceName(values, resource),
        resource,
        values
            .getOrDefault("OTEL_TRACES_SAMPLER", "parentbased_always_on")
            .toLowerCase(Locale.ROOT),
        Double.parseDouble(values.getOrDefault("OTEL_TRACES_SAMPLER_ARG", "1.0")),
        millis(values, "OTEL_BSP_SCHEDULE_DELAY", 5_000),
        millis(values, "OTEL_BSP_EXPORT_TIMEOUT", 30_000),
        number(values, "OTEL_BSP_MAX_QUEUE_SIZE", 2_048),
        number(values, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512),
        number(values, "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", 65_536));
  }

  /** OTEL_SERVICE_NAME, else the resource attributes' service.name, else engram. */
  private static String serviceName(Map<String, String> values, Map<String, String> resource) {
    String set = values.getOrDefault("OTEL_SERVICE_NAME", "").strip();
    return !set.isEmpty() ? set : resource.getOrDefault("service.name", "engram");
  }

  /** Whether spans leave this node. */
  public boolean exports() {
    return endpoint != null;
  }

  /**
   * The traces' URL: the signal's own as given, else the general endpoint with {@code /v1/traces}
   * appended (as the OTLP exporter specification says).
   */
  static Optional<String> endpoint(Map<String, String> values) {
    String own = values.getOrDefault("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip();
    if (!own.isEmpty()) {
      return Optional.of(own);
    }
    String general = values.getOrDefault("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip();
    if (general.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(
        (general.endsWith("/") ? general.substring(0, general.length() - 1) : general)
            + "/v1/traces");
  }

  /** The problems of the variables that no single variable's rule sees (empty: none). */
  public static List<String> problems(Map<String, String> values) {
    List<String> problems = new java.util.ArrayList<>();
    for (String name :
        List.of("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) {
      String url = values.getOrDefault(name, "").strip();
      if (!url.isEmpty() && !isHttpUrl(url)) {
        problems.add(name + " must be an http:// or https:// URL (an OTLP/HTTP collector, such "
            + "as http://collector:4318), got '" + url + "'");
      }
    }
    for (String name : List.of(
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
        "OTEL_RESOURCE_ATTRIBUTES")) {
      String[] pairs = values.getOrDefault(name, "").split(",");
      for (int i = 0; i < pairs.length; i++) {
        if (pairs[i].isBlank()) {
          continue;
        }
        // Not echoed: a header list holds the collector's key.
        if (pairs[i].indexOf('=') <= 0) {
          problems.add(name + " takes name=value pairs separated by commas; entry " + (i + 1)
              + " has no name=value");
          continue;
        }
        try {
          decoded(pairs[i].substring(pairs[i].indexOf('=') + 1).strip());
        } catch (IllegalArgumentException e) {
          problems.add(name + ": the value of entry " + (i + 1) + " has a '%' that is not "
              + "followed by two hexadecimal digits (values are percent-encoded)");
        }
      }
    }
    return problems;
  }

  private static boolean isHttpUrl(String url) {
    try {
      java.net.URI uri = new java.net.URI(url);
      return ("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))
          && uri.getHost() != null;
    } catch (java.net.URISyntaxException e) {
      return false;
    }
  }

  /** The signal's own variable ({@code OTEL_EXPORTER_OTLP_TRACES_<name>}), else the general one. */
  private static Optional<String> otlp(Map<String, String> values, String name) {
    for (String variable :
        List.of("OTEL_EXPORTER_OTLP_TRACES_" + name, "OTEL_EXPORTER_OTLP_" + name)) {
      String value = values.getOrDefault(variable, "").strip();
      if (!value.isEmpty()) {
        return Optional.of(value);
      }
    }
    return Optional.empty();
  }

  /** {@code name=value,name=value}, values percent-decoded (W3C Baggage's form, as OTel reads it). */
  static Map<String, String> pairs(String list) {
    Map<String, String> pairs = new LinkedHashMap<>();
    for (String pair : list.split(",")) {
      int equals = pair.indexOf('=');
      if (equals > 0) {
        pairs.put(
            pair.substring(0, equals).strip(),
            decoded(pair.substring(equals + 1).strip()));
      }
    }
    return Map.copyOf(pairs);
  }

  /**
   * A value percent-decoded as OpenTelemetry reads these lists; a '+' stays a '+' (a collector's
   * key in base64 has them), where a form decoder would make it a space.
   */
  private static String decoded(String value) {
    return URLDecoder.decode(value.replace("+", "%2B"), StandardCharsets.UTF_8);
  }

  private static Duration millis(Map<String, String> values, String name, long fallback) {
    return Duration.ofMillis(number(values, name, fallback));
  }

  private static int number(Map<String, String> values, String name, long fallback) {
    String value = values.getOrDefault(name, "").strip();
    return (int) (value.isEmpty() ? fallback : Long.parseLong(value));
  }

  @Override
  public String toString() {
    return exports() ? "traces to " + endpoint + " (" + sampler + ")" : "traces off";
  }
}
