package io.engram.inference;

import io.engram.inference.call.ResponseCache;
import io.engram.inference.usage.RequestLog;
import io.engram.platform.cluster.ChangeSignal;
import io.engram.store.ErasureParticipant;
import java.util.ArrayList;
import java.util.List;

/**
 * The gateway's part of an erasure: an erased end user's stored responses (the Responses API's
 * conversations) deleted and their logged messages and answers removed from the request log; the
 * logged messages of every request that put an erased memory in its prompt removed too; and the
 * organization's cached answers dropped on every node (through the cluster's bus; without Redis,
 * on this node, and the others' can never be served again: their key holds the erased memory).
 */
final class InferenceErasure implements ErasureParticipant {
  private final ResponseStore responses;
  private final ResponseCache cache;
  private final RequestLog requests;
  private volatile ChangeSignal cacheDrops;

  InferenceErasure(ResponseStore responses, ResponseCache cache, RequestLog requests) {
    this.responses = responses;
    this.cache = cache;
    this.requests = requests;
  }

  /** Tells the other nodes to drop an organization's cached answers, and hears them say so. */
  void dropCachesWith(ChangeSignal signal) {
    this.cacheDrops = signal;
  }

  void dropCache(String orgId) {
    cache.forget(orgId);
  }

  @Override
  public List<Removed> erase(Target target) {
    List<Removed> removed = new ArrayList<>();
    if (target.endUser() != null) {
      removed.add(new Removed(
          "stored responses",
          responses.forget(target.orgId(), target.endUser()),
          "deleted (the end user's conversations kept for previous_response_id)"));
    }
    requests.flush(); // what is queued is written first, then forgotten with the rest
    removed.add(new Removed(
        "request log",
        requests.forget(target.orgId(), target.endUser(), target.memoryIds()),
        "logged messages and answers removed"));
    int dropped = cache.forget(target.orgId());
    ChangeSignal signal = cacheDrops;
    if (signal != null) {
      signal.announce(target.orgId());
    }
    removed.add(new Removed(
        "response cache",
        dropped,
        signal == null
            ? "the organization's cached answers dropped on this node"
            : "the organization's cached answers dropped on this node and, through Redis, the"
                + " others"));
    return removed;
  }
}
