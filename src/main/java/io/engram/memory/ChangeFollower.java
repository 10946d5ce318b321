package io.engram.memory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A node's place in the memory change log, and the changes it made itself: what an index follows
 * to see the other nodes' writes (the embedded index indexes them; the Solr index, where the
 * writer indexed them already, only drops its kept rows). A node's own changes are noted as it
 * makes them ({@link #applied}), so following the log skips them, and announced to the others.
 */
public final class ChangeFollower {
  /** How far back each periodic look at the change log goes again, for late commits. */
  static final Duration TAIL_OVERLAP = Duration.ofSeconds(10);

  private final ChangeLog changeLog;
  private final Clock clock;
  private final AtomicLong position = new AtomicLong();
  /** Change-log entries applied in the last moments, by position: what following need not redo. */
  private final Map<Long, Long> applied = new ConcurrentHashMap<>();

  private volatile Runnable announce = () -> {};

  public ChangeFollower(ChangeLog changeLog, Clock clock) {
    this.changeLog = changeLog;
    this.clock = clock;
  }

  /** The last change seen. */
  public long position() {
    return position.get();
  }

  /** Starts again from {@code seq}, forgetting what this node applied (its index was rebuilt). */
  public void restartAt(long seq) {
    applied.clear();
    position.set(seq);
  }

  /**
   * The memories changed after {@code seq} (and since {@code since}), but for those changes this
   * node applied itself unless {@code everyChange}; the position moves past them all.
   */
  public Set<String> changedSince(long seq, Instant since, boolean everyChange) {
    Set<String> ids = new LinkedHashSet<>();
    long last = seq;
    for (ChangeLog.Change change : changeLog.since(seq, since)) {
      if (applied.putIfAbsent(change.seq(), change.changedAt().toEpochMilli()) == null
          || everyChange) {
        ids.add(change.memoryId());
      }
      last = Math.max(last, change.seq());
    }
    position.accumulateAndGet(last, Math::max);
    return ids;
  }

  /** The periodic look: what changed since the position, and in the last moments again. */
  public Set<String> tail() {
    Instant since = clock.instant().minus(TAIL_OVERLAP);
    applied.values().removeIf(at -> at < since.minus(TAIL_OVERLAP).toEpochMilli());
    return changedSince(position.get(), since, false);
  }

  /**
   * What other nodes logged after the last change seen, without the look back: for when another
   * node says it just wrote, which can come many times a second.
   */
  public Set<String> newer() {
    return changedSince(position.get(), Instant.ofEpochMilli(Long.MAX_VALUE), false);
  }

  /** Notes that this node applied change {@code seq} itself, and tells the other nodes. */
  public void applied(long seq) {
    applied.put(seq, clock.millis());
    announce.run();
  }

  /** What to do when this node wrote a change: tell the other nodes (a change signal). */
  public void announceWith(Runnable announce) {
    this.announce = announce;
  }
}
