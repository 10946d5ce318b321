package io.engram.memory;

/**
 * Who made a change, as a transition records it: a caller's credential and user, or none for
 * reflection's own changes, and the request (or reflection run) it belonged to.
 */
public record ChangeAuthor(String credentialId, String userId, String requestId) {
}
