package io.engram.organizations;

import java.time.Instant;

public record User(
    String id, String orgId, String email, String name, Role role, Instant createdAt) {}
