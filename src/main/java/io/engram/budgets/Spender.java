package io.engram.budgets;

/**
 * Who a request's cost is counted for: its organization, the credential that sent it (an API key
 * or a token; null for a signed-in person's session) and, for a conversation as an assistant, that
 * assistant (else null).
 */
public record Spender(String orgId, String credentialId, String assistantId) {}
