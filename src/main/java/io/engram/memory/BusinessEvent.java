package io.engram.memory;

import java.time.Instant;

/**
 * A developer event as received, with what the staging pipeline made of it ({@code stagingJson}:
 * the candidates it staged and the statements it skipped, with reasons). {@code endUser} and
 * {@code session}: the end user it was about and the session it came from, null when not said.
 */
public record BusinessEvent(
    String id,
    String orgId,
    String agent,
    String endUser,
    String session,
    String type,
    String source,
    String subject,
    String text,
    String metadataJson,
    String stagingJson,
    String credentialId,
    String userId,
    String requestId,
    Instant receivedAt) {}
