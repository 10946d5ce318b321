package io.engram.inference.routing;

import io.engram.platform.cluster.NodeBus;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Which deployments are resting after failing. A deployment that fails {@link #FAILURES_TO_COOL}
 * times in a row, answers 429 or refuses the gateway's key is cooled down: requests skip it (while
 * another deployment can take them) until the time is up, then one is let through as a probe;
 * a success ends the count. A cooldown started here is told to the other nodes over the node bus
 * (Redis when REDIS_URL is set), so the cluster rests a deployment together; the hot path reads
 * only this node's map.
 */
final class Cooldowns {
  static final int FAILURES_TO_COOL = 3;
  static final Duration DEFAULT = Duration.ofSeconds(10);
  static final Duration LONGEST = Duration.ofMinutes(5);
  private static final String CHANNEL = "engram:routing:cooldowns";

  private final Map<String, Long> until = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> failures = new ConcurrentHashMap<>();
  private final Clock clock;
  private final NodeBus bus;
  private final Consumer<String> cooled;

  /** @param cooled told the deployment's id each time this node starts a cooldown (metrics). */
  Cooldowns(Clock clock, NodeBus bus, Consumer<String> cooled) {
    this.clock = clock;
    this.bus = bus;
    this.cooled = cooled;
    bus.subscribe(CHANNEL, this::heard);
  }

  boolean isCooling(String deployment) {
    Long end = until.get(deployment);
    return end != null && end > clock.millis();
  }

  /** When a resting deployment may take requests again (epoch ms), 0 when it is not resting. */
  long coolingUntil(String deployment) {
    Long end = until.get(deployment);
    return end == null ? 0 : end;
  }

  void succeeded(String deployment) {
    AtomicInteger count = failures.get(deployment);
    if (count != null) {
      count.set(0);
    }
    until.remove(deployment);
  }

  /** Counts a failure; {@code restNow} (a 429, a refused key) cools it down at once. */
  void failed(String deployment, boolean restNow, Duration rest) {
    int count = failures.computeIfAbsent(deployment, d -> new AtomicInteger()).incrementAndGet();
    if (restNow || count >= FAILURES_TO_COOL) {
      Duration length = rest == null ? DEFAULT : min(rest, LONGEST);
      long end = clock.millis() + length.toMillis();
      until.merge(deployment, end, Math::max);
      failures.get(deployment).set(0);
      cooled.accept(deployment);
      bus.publish(CHANNEL, deployment + " " + end);
    }
  }

  private void heard(String message) {
    int space = message.indexOf(' ');
    if (space <= 0) {
      return;
    }
    try {
      until.merge(
          message.substring(0, space), Long.parseLong(message.substring(space + 1)), Math::max);
    } catch (NumberFormatException ignored) {
      // not one of ours
    }
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }
}
