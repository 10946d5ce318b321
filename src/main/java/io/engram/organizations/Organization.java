package io.engram.organizations;

import java.time.Instant;

public record Organization(String id, String name, Plan plan, Instant createdAt, Instant updatedAt) {
}
