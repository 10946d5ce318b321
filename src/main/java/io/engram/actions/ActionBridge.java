package io.engram.actions;

import java.net.URI;
import java.time.Instant;

/**
 * Where an organization's own system carries out one capability: Engram POSTs each execution to
 * {@code url}, signed with the bridge's secret, and waits at most {@code timeoutMillis}.
 */
public record ActionBridge(
    String id,
    String orgId,
    String capabilityId,
    URI url,
    int timeoutMillis,
    Instant createdAt,
    String createdBy) {}
