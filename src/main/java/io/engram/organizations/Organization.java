package io.engram.organizations;

import java.time.Instant;

/**
 * An organization. {@code requestsPerMinute} is a contract-specific /api budget ("1000 or
 * contract-specific" from Growth up, "custom" on Dedicated); null means the plan's own.
 */
public record Organization(
    String id,
    String name,
    Plan plan,
    Long requestsPerMinute,
    Instant createdAt,
    Instant updatedAt) {

  /** The /api requests per minute in force: the contract's when set, else the plan's. */
  public Limit apiRequestsPerMinute() {
    return requestsPerMinute == null
        ? plan.limits().requestsPerMinute()
        : Limit.of(requestsPerMinute);
  }
}
