package io.engram.platform.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Clock;
import java.time.Duration;

/** The Prometheus registry and the HTTP meters every request feeds. */
public final class HttpMetrics implements AutoCloseable {

  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final JvmGcMetrics gcMetrics = new JvmGcMetrics();
  private final TrafficMeter traffic;

  public HttpMetrics(Clock clock) {
    this.traffic = new TrafficMeter(clock);
    // promtool check metrics: no abbreviated units in names (process.cpu.time is exposed in ns;
    // process_cpu_usage says the same), and no "_count" suffix on a gauge.
    registry
        .config()
        .meterFilter(MeterFilter.denyNameStartsWith("process.cpu.time"))
        .meterFilter(new MeterFilter() {
          @Override
          public Meter.Id map(Meter.Id id) {
            return id.getName().equals("system.cpu.count")
                ? id.withName("system.cpu.logical.processors")
                : id;
          }
        });
    new JvmMemoryMetrics().bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new FileDescriptorMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    gcMetrics.bindTo(registry);
  }

  /** Requests and server errors per organization (the alerts' measurements). */
  public TrafficMeter traffic() {
    return traffic;
  }

  /** One finished request, by method, route template and status, into a latency histogram. */
  public void recordRequest(String method, String route, int status, long durationNanos) {
    Timer.builder("http.server.requests")
        .description("HTTP requests by route and status")
        .tags("method", method, "route", route, "status", String.valueOf(status))
        .publishPercentileHistogram()
        .minimumExpectedValue(Duration.ofMillis(1))
        .maximumExpectedValue(Duration.ofSeconds(120))
        .register(registry)
        .record(Duration.ofNanos(durationNanos));
  }

  /** A request refused by a rate limit, by which limit refused it. */
  public void rateLimitRejected(String limit) {
    Counter.builder("engram.ratelimit.rejections")
        .description("Requests refused with 429, by limit")
        .tag("limit", limit)
        .register(registry)
        .increment();
  }

  /** The registry, for the domains that keep their own meters (inference). */
  public MeterRegistry registry() {
    return registry;
  }

  public String scrape() {
    return registry.scrape();
  }

  @Override
  public void close() {
    gcMetrics.close();
    registry.close();
  }
}
