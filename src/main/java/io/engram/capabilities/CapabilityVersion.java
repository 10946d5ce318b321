package io.engram.capabilities;

import java.time.Instant;

/** One capability set an assistant had: in force from {@code changedAt} until the next version. */
public record CapabilityVersion(
    String assistantId,
    long version,
    CapabilitySet set,
    Instant changedAt,
    Actor actor,
    String requestId) {}
