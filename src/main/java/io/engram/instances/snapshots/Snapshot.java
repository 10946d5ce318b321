package io.engram.instances.snapshots;

import java.time.Instant;

/**
 * A snapshot of an instance: its files and the organization's data it serves, with a manifest of
 * checksums. {@code creating} while it is written; {@code complete} once written and verified;
 * {@code failed} (with the reason) when it could not be, or was cut by a stop. Kinds: taken on
 * request ({@code manual}), as an automatic backup ({@code automatic}), or before a restore over
 * live data ({@code safety}).
 */
public record Snapshot(
    String id,
    String orgId,
    String instanceId,
    String kind,
    String description,
    String status,
    String location,
    Instant createdAt,
    Instant completedAt,
    Instant expiresAt,
    Integer files,
    Long bytes,
    String manifestSha256,
    String error) {}
