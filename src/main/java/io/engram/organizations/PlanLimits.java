package io.engram.organizations;

/**
 * Every per-plan limit the spec gives, in one record. The values live in {@link Plan}'s table;
 * numbers the spec leaves out are Engram's choice and are listed in docs/plans.md.
 */
public record PlanLimits(
    Limit capabilityCount,
    Limit requestsPerMinute,
    Limit concurrentRequests,
    Limit tokensPerRequest,
    Limit tokensPerHour,
    Limit storageGb,
    Limit connections,
    Limit webSocketConnections) {}
