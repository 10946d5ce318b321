package io.engram.alerts;

import java.time.Instant;

/**
 * One attempt to deliver an event to a channel: {@code delivered} (a 2xx), {@code retrying} (it
 * failed and another attempt follows) or {@code failed} (the last attempt failed).
 */
public record Delivery(
    String id,
    String channelId,
    String event,
    String alertId,
    int attempt,
    String outcome,
    Integer responseStatus,
    String error,
    Instant at) {}
