package io.engram.administration;

import java.util.Map;

/**
 * What an organization holds open on this node now (connections, inference requests, WebSockets),
 * shown beside its limits by the configuration route. Each domain that holds something says what.
 */
@FunctionalInterface
public interface InUse {
  /** Counts by name, such as {@code "connections"}. */
  Map<String, Integer> of(String orgId);
}
