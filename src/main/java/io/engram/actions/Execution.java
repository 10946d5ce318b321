package io.engram.actions;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.Locale;

/**
 * One execution of a capability a model asked for, as audited: which assistant, capability and
 * capability-set version, the tool call and its arguments, what came of it ({@code result} for the
 * model, or the {@code reason} it was refused or failed), the credential of the conversation, and
 * for an approval who decided and when.
 */
public record Execution(
    String id,
    String orgId,
    String assistantId,
    String capabilityId,
    long setVersion,
    String toolCallId,
    JsonNode arguments,
    Status status,
    JsonNode result,
    String reason,
    String credentialId,
    String requestId,
    Instant createdAt,
    String decidedBy,
    Instant decidedAt) {

  /** Where an execution stands. */
  public enum Status {
    /** Claimed by a conversation, not finished yet. */
    RUNNING,
    /** Carried out; {@code result} is what the handler or bridge answered. */
    EXECUTED,
    /** Refused before any effect; {@code reason} says why (the model is told). */
    REFUSED,
    /** Waiting for a person's approval (requiresApproval); nothing is done until then. */
    PENDING_APPROVAL,
    /** A person refused the pending execution; nothing was done. */
    REJECTED,
    /** The handler or bridge failed; {@code reason} says how. */
    FAILED;

    public String wireName() {
      return name().toLowerCase(Locale.ROOT);
    }

    public static Status fromWire(String value) {
      return valueOf(value.toUpperCase(Locale.ROOT));
    }
  }
}
