package io.engram.organizations;

import java.time.Instant;

/**
 * One change to an organization's settings: what ({@code action}, such as {@code config.update}),
 * by which credential, in which request, and the change itself as JSON ({@code detail}).
 */
public record AuditEntry(
    String id,
    String orgId,
    Instant at,
    String action,
    String credentialId,
    String requestId,
    String detail) {}
