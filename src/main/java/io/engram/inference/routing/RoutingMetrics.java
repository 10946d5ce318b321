package io.engram.inference.routing;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Each deployment's calls in /metrics: {@code engram_deployment_requests_total{deployment,
 * outcome}} (completed, or the failure's code), {@code engram_deployment_latency_seconds} (until
 * the deployment answered or failed), {@code engram_deployment_cooldowns_total}, and {@code
 * engram_routing_retries_total{model}} (attempts after a request's first).
 */
final class RoutingMetrics {
  private final MeterRegistry registry;
  // Looked up once per deployment: a request builds no meter id and no key.
  private final Map<String, DeploymentMeters> deployments = new ConcurrentHashMap<>();

  /** One deployment's meters: its latency, and a counter per outcome (completed the common one). */
  private final class DeploymentMeters {
    final String deployment;
    final Timer latency;
    final Counter completed;
    final Map<String, Counter> failed = new ConcurrentHashMap<>();

    DeploymentMeters(String deployment) {
      this.deployment = deployment;
      this.latency = Timer.builder("engram_deployment_latency")
          .description("Time until a deployment answered or failed")
          .tag("deployment", deployment)
          .register(registry);
      this.completed = counter(COMPLETED);
    }

    Counter counter(String outcome) {
      return Counter.builder("engram_deployment_requests")
          .description("Calls to a deployment, by outcome")
          .tag("deployment", deployment)
          .tag("outcome", outcome)
          .register(registry);
    }
  }

  static final String COMPLETED = "completed";

  RoutingMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  void attempt(String deployment, String outcome, long nanos) {
    DeploymentMeters meters = deployments.computeIfAbsent(deployment, DeploymentMeters::new);
    (COMPLETED.equals(outcome)
            ? meters.completed
            : meters.failed.computeIfAbsent(outcome, meters::counter))
        .increment();
    meters.latency.record(nanos, TimeUnit.NANOSECONDS);
  }

  void cooled(String deployment) {
    Counter.builder("engram_deployment_cooldowns")
        .description("Times a deployment was cooled down after failing")
        .tag("deployment", deployment)
        .register(registry)
        .increment();
  }

  void retried(String model) {
    Counter.builder("engram_routing_retries")
        .description("Attempts after a request's first, by client model")
        .tag("model", model)
        .register(registry)
        .increment();
  }
}
