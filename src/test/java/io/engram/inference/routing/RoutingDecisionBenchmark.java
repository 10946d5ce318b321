package io.engram.inference.routing;

import io.engram.platform.cluster.NodeBus;
import io.engram.platform.net.Egress;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The routing decision of one request (issue 40: p99 under 5 µs with 20 deployments): which
 * deployment takes it, among 20 in four priority groups of five, weighted or least busy, with the
 * first group's deployments resting (so the decision walks past them to the second group), as
 * the gateway makes it on every attempt. Sample time gives the percentiles.
 *   bash bench/jmh.sh RoutingDecision
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@Threads(2)
public class RoutingDecisionBenchmark {
  @Param({"weighted", "least_busy"})
  public String strategy;

  @Param({"0", "5"})
  public int resting;

  private RoutedEngine engine;

  @Setup
  public void setUp() {
    Cooldowns cooldowns = new Cooldowns(Clock.systemUTC(), NodeBus.LOCAL, id -> {});
    List<RoutedModel.Deployment> deployments = new ArrayList<>();
    List<List<Target>> groups = new ArrayList<>();
    for (int group = 0; group < 4; group++) {
      List<Target> targets = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        String id = "dep_" + group + "_" + i;
        deployments.add(new RoutedModel.Deployment(id, "prov", "m", 1 + i, group));
        targets.add(
            new Target(id, "prov", null, URI.create("http://127.0.0.1:9/v1/"), 1 + i, group, null));
        if (group == 0 && i < resting) {
          cooldowns.failed(id, true, Duration.ofHours(1));
        }
      }
      groups.add(List.copyOf(targets));
    }
    RoutedModel model = new RoutedModel(
        "mdl",
        null,
        "bench",
        RoutedModel.Type.CHAT,
        8192,
        new RoutedModel.Capabilities(true, true, false),
        null,
        null,
        RoutedModel.Strategy.valueOf(strategy.toUpperCase()),
        2,
        deployments,
        0,
        0);
    engine = new RoutedEngine(
        model,
        List.copyOf(groups),
        cooldowns,
        new RoutingMetrics(new SimpleMeterRegistry()),
        Egress.OPEN,
        Duration.ofSeconds(30),
        ProviderAlerts.NONE);
  }

  /** A request's first decision: a fresh set of tried deployments, and the pick. */
  @Benchmark
  public Target firstPick() {
    Set<Target> tried = new HashSet<>();
    return engine.pick(tried);
  }
}
