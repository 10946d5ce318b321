package io.engram.inference;

import io.engram.platform.cluster.ChangeSignal;
import io.engram.store.Database;
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
  /** Memory ids per LIKE query over the request log's memory lists. */
  private static final int IDS_PER_QUERY = 50;

  private final Database db;
  private final ResponseCache cache;
  private volatile ChangeSignal cacheDrops;

  InferenceErasure(Database db, ResponseCache cache) {
    this.db = db;
    this.cache = cache;
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
          db.write(h -> h.createUpdate(
                  "DELETE FROM responses WHERE org_id = :org AND end_user_id = :user")
              .bind("org", target.orgId())
              .bind("user", target.endUser())
              .execute()),
          "deleted (the end user's conversations kept for previous_response_id)"));
    }
    removed.add(
        new Removed("request log", scrubRequestLog(target), "logged messages and answers removed"));
    int dropped = cache.forget(target.orgId());
    ChangeSignal signal = cacheDrops;
    if (signal != null) {
      signal.announce(target.orgId());
    }
    removed.add(new Removed(
        "response cache", dropped, "the organization's cached answers dropped on every node"));
    return removed;
  }

  /** The end user's logged requests, and those whose prompt held an erased memory. */
  private long scrubRequestLog(Target target) {
    String scrub = "UPDATE request_log SET messages_sealed = NULL, answer_sealed = NULL"
        + " WHERE org_id = :org AND (messages_sealed IS NOT NULL OR answer_sealed IS NOT NULL)";
    long count = 0;
    if (target.endUser() != null) {
      count += db.write(h -> h.createUpdate(scrub + " AND end_user_id = :user")
          .bind("org", target.orgId())
          .bind("user", target.endUser())
          .execute());
    }
    List<String> ids = List.copyOf(target.memoryIds());
    for (int from = 0; from < ids.size(); from += IDS_PER_QUERY) {
      List<String> chunk = ids.subList(from, Math.min(ids.size(), from + IDS_PER_QUERY));
      StringBuilder any = new StringBuilder();
      for (int i = 0; i < chunk.size(); i++) {
        any.append(i == 0 ? "" : " OR ").append("memories LIKE :m").append(i);
      }
      count += db.write(h -> {
        var update = h.createUpdate(scrub + " AND (" + any + ")").bind("org", target.orgId());
        for (int i = 0; i < chunk.size(); i++) {
          update.bind("m" + i, "%\"" + chunk.get(i) + "\"%");
        }
        return update.execute();
      });
    }
    return count;
  }
}
