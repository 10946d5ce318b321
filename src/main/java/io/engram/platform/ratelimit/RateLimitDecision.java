package io.engram.platform.ratelimit;

/**
 * The outcome of one request against a limit: what the {@code X-RateLimit-*} headers report.
 * {@code resetEpochSeconds} is when the current window ends (Unix seconds).
 */
public record RateLimitDecision(
    boolean allowed, long limit, long remaining, long resetEpochSeconds, long retryAfterSeconds) {}
