package io.engram.inference.routing;

import io.engram.inference.remote.ProviderEngine;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One deployment as the router uses it: the engine that calls its provider with its model name,
 * its weight and priority group, its provider's own timeout (null: the request's), and the
 * requests in flight on it on this node (for least-busy balancing).
 */
final class Target {
  final String id;
  final String providerName;
  final ProviderEngine engine;
  final URI origin;
  final int weight;
  final int priority;
  final Duration timeout;
  final AtomicInteger inFlight = new AtomicInteger();
  /** Organizations whose requests it refused as misconfigured, until it answers them again. */
  final java.util.Set<String> misconfiguredFor = java.util.concurrent.ConcurrentHashMap.newKeySet();

  Target(
      String id,
      String providerName,
      ProviderEngine engine,
      URI origin,
      int weight,
      int priority,
      Duration timeout) {
    this.id = id;
    this.providerName = providerName;
    this.engine = engine;
    this.origin = origin;
    this.weight = weight;
    this.priority = priority;
    this.timeout = timeout;
  }
}
