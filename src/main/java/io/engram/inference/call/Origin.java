package io.engram.inference.call;

/**
 * Where a model call came from and when it started: its record in the request log. {@code step}
 * numbers the steps of an assistant's tool loop (0: the request itself).
 */
public record Origin(
    String route,
    String agent,
    String endUser,
    String assistantId,
    long startedNanos,
    long atMillis,
    int step) {
  public Origin(String route, String agent, String endUser, String assistantId, long atMillis) {
    this(route, agent, endUser, assistantId, System.nanoTime(), atMillis, 0);
  }

  /** The next step of a tool loop, which the log keeps as its own record. */
  Origin next() {
    return new Origin(route, agent, endUser, assistantId, System.nanoTime(), atMillis, step + 1);
  }

  /** The record's id: the request's, and for a tool loop's later steps the step's number. */
  String recordId(String requestId) {
    return step == 0 ? requestId : requestId + "." + step;
  }
}
