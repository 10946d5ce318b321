package io.engram.inference.call;

import io.engram.access.Principal;
import io.engram.guardrails.Screening;
import io.engram.inference.usage.RequestLog;
import io.engram.inference.usage.RequestRecord;
import io.engram.platform.http.ApiException;
import io.engram.settings.ConfigField;
import java.util.List;

/**
 * Keeps each call's record in its organization's request log (never waited for): who sent it,
 * how it ended, how long each part took, what it used and cost, the cache and the memories, and
 * its messages and answer only where the organization turned {@code request_log.contents} on.
 * A refusal at the door (a limit's or a budget's 429) is kept too, before the client gets it.
 */
final class RequestLogStage implements Stage {
  private final RequestLog requests;

  RequestLogStage(RequestLog requests) {
    this.requests = requests;
  }

  @Override
  public Ended intercept(Chain chain) {
    Ended ended = chain.proceed(chain.sink());
    ModelCall call = chain.call();
    if (call.config() == null) {
      return ended; // a caller without an organization has no log
    }
    Origin origin = call.origin();
    boolean contents = call.config().switchedOn(ConfigField.REQUEST_LOG_CONTENTS);
    requests.add(new RequestRecord(
        who(call.caller(), origin, origin.recordId(call.requestId()), call.modelId()),
        ended.run().deployment().isEmpty() ? null : ended.run().deployment(),
        ended.run().attempts(),
        ended.status(),
        ended.failure() == null ? null : ended.code(),
        millis(ended.run().startedNanos() - origin.startedNanos()),
        ended.run().firstTokenNanos() == 0
            ? null
            : millis(ended.run().firstTokenNanos() - ended.run().startedNanos()),
        millis(System.nanoTime() - origin.startedNanos()),
        ended.charged().promptTokens(),
        ended.charged().completionTokens(),
        ended.charged().total() == 0 ? 0 : call.memoryTokens(),
        ended.costNanos(),
        call.cache().status(),
        call.memory().scored(),
        contents ? call.sent() : null,
        contents ? ended.answer() : null,
        guardrailed(call.guardrails()),
        call.leftOutMemories()));
    return ended;
  }

  long now() {
    return requests.now();
  }

  /**
   * Keeps a refusal before any work: a limit's or a budget's status and code, or an input
   * guardrail's block with the guardrails that fired.
   */
  void refused(
      Principal caller,
      String modelId,
      Origin origin,
      String requestId,
      ApiException e,
      List<Screening.Firing> fired) {
    if (caller.organization() != null) {
      requests.add(RequestRecord.refused(
          who(caller, origin, requestId, modelId),
          e.status(),
          e.code(),
          millis(System.nanoTime() - origin.startedNanos()),
          guardrailed(fired)));
    }
  }

  /** The firings as the log keeps them: ids, phases, actions and kinds, never the text. */
  private static List<RequestRecord.Guardrailed> guardrailed(List<Screening.Firing> fired) {
    return fired.stream()
        .map(f -> new RequestRecord.Guardrailed(
            f.guardrail().id(), f.phase().id(), f.action().id(), List.copyOf(f.kinds())))
        .toList();
  }

  private static long millis(long nanos) {
    return nanos / 1_000_000;
  }

  private static RequestRecord.Who who(Principal caller, Origin origin, String id, String modelId) {
    return new RequestRecord.Who(
        id,
        caller.orgId(),
        origin.atMillis(),
        origin.route(),
        caller.credentialId(),
        origin.assistantId(),
        origin.agent(),
        origin.endUser(),
        modelId);
  }
}
