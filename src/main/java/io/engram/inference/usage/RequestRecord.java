package io.engram.inference.usage;

import java.util.List;

/**
 * One model request's whole story, as the request log keeps it: who sent it and as what, which
 * model and deployment answered after how many attempts, how it ended, how long each part took,
 * what it used and cost, whether the response cache answered, which memories went into it with
 * their scores, and (only where the organization turned it on) its messages and answer.
 *
 * @param queueMs from the request's start (its body read) to the engine's call: memory, limits
 * @param firstTokenMs from the engine's call to the first piece of the answer (null: none)
 * @param cache hit, miss, or null when the cache was not consulted
 * @param messages the client's messages as JSON (without Engram's memory block), or null
 * @param answer the answer's text, or null
 * @param guardrails the guardrails that fired on it, in any phase
 * @param memoriesLeftOut the memories its memory_injection guardrails left out of the chat
 */
public record RequestRecord(
    Who who,
    String deployment,
    int attempts,
    int status,
    String errorCode,
    long queueMs,
    Long firstTokenMs,
    long totalMs,
    long promptTokens,
    long completionTokens,
    long memoryTokens,
    long costNanos,
    String cache,
    List<UsedMemory> memories,
    String messages,
    String answer,
    List<Guardrailed> guardrails,
    List<String> memoriesLeftOut) {

  public RequestRecord {
    guardrails = guardrails == null ? List.of() : List.copyOf(guardrails);
    memoriesLeftOut = memoriesLeftOut == null ? List.of() : List.copyOf(memoriesLeftOut);
  }

  /** A guardrail that fired: in which phase, what it did, the kinds it found (never the text). */
  public record Guardrailed(String guardrailId, String phase, String action, List<String> kinds) {}

  /**
   * Which request it was and who sent it: its id (the X-Request-Id), organization, start (epoch
   * ms), route, credential, assistant and agent (null when none), and the model the client named.
   */
  public record Who(
      String id,
      String orgId,
      long at,
      String route,
      String credentialId,
      String assistantId,
      String agent,
      String endUser,
      String model) {}

  /** A memory that went into the request's prompt, and the score it was ranked by. */
  public record UsedMemory(String id, double score) {}

  /**
   * A request refused before any work (a limit's, a budget's or an input guardrail's {@code
   * status} and code), with the guardrails that fired on it.
   */
  public static RequestRecord refused(
      Who who, int status, String errorCode, long totalMs, List<Guardrailed> guardrails) {
    return new RequestRecord(
        who,
        null,
        0,
        status,
        errorCode,
        0,
        null,
        totalMs,
        0,
        0,
        0,
        0,
        null,
        List.of(),
        null,
        null,
        guardrails,
        List.of());
  }
}
