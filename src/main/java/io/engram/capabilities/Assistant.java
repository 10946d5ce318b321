package io.engram.capabilities;

import java.time.Instant;

/**
 * An assistant of an organization. A personal assistant ({@code employee_personal}) has an owner,
 * one user of the organization; a shared one has none. {@code version} counts the capability sets
 * the assistant has had and is its ETag.
 */
public record Assistant(
    String id,
    String orgId,
    String name,
    AssistantType type,
    String ownerUserId,
    long version,
    CapabilitySet capabilities,
    Instant createdAt,
    Instant updatedAt) {

  public Assistant withCapabilities(CapabilitySet next, Instant at) {
    return new Assistant(id, orgId, name, type, ownerUserId, version + 1, next, createdAt, at);
  }
}
