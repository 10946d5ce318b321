package io.engram.memory;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * What ranking needs to know about a memory's uses, small enough to live on the memory's row:
 * the most recent {@value #RECENT} uses exactly, and for the older ones only their count, total
 * weight and the time of the first. {@link Activation} turns this into a base level. Every use is
 * also kept in full in {@code memory_uses} for audit.
 */
public record UseHistory(
    List<Use> recent, long olderCount, double olderWeight, Instant firstUseAt) {
  public static final int RECENT = 16;

  public record Use(UseKind kind, Instant at) {}

  public UseHistory {
    recent = List.copyOf(recent);
  }

  public static UseHistory first(UseKind kind, Instant at) {
    return new UseHistory(List.of(new Use(kind, at)), 0, 0, at);
  }

  /** The summary of a full list of uses (any order), as if they had been added one by one. */
  public static UseHistory of(List<Use> all) {
    return of(all, (history, use) -> true);
  }

  /**
   * The same, adding in time order only the uses {@code counted} accepts given the history so far
   * (the first always counts).
   */
  public static UseHistory of(
      List<Use> all, java.util.function.BiPredicate<UseHistory, Use> counted) {
    List<Use> sorted = all.stream().sorted(Comparator.comparing(Use::at)).toList();
    UseHistory history = first(sorted.getFirst().kind(), sorted.getFirst().at());
    for (Use use : sorted.subList(1, sorted.size())) {
      if (counted.test(history, use)) {
        history = history.plus(use.kind(), use.at());
      }
    }
    return history;
  }

  /** This history with one more use; the oldest exact use folds into the aggregate when full. */
  public UseHistory plus(UseKind kind, Instant at) {
    List<Use> uses = new ArrayList<>(recent);
    uses.add(new Use(kind, at));
    uses.sort(Comparator.comparing(Use::at));
    long count = olderCount;
    double weight = olderWeight;
    while (uses.size() > RECENT) {
      Use folded = uses.removeFirst();
      count++;
      weight += folded.kind().weight();
    }
    Instant first = at.isBefore(firstUseAt) ? at : firstUseAt;
    return new UseHistory(uses, count, weight, first);
  }

  public long count() {
    return recent.size() + olderCount;
  }

  public Instant lastUsedAt() {
    return recent.getLast().at();
  }

  /** The {@code recent_uses} column: {@code e1700000000000 q1700000360000 ...}, oldest first. */
  String recentText() {
    StringBuilder text = new StringBuilder();
    for (Use use : recent) {
      if (!text.isEmpty()) {
        text.append(' ');
      }
      text.append(use.kind().code()).append(use.at().toEpochMilli());
    }
    return text.toString();
  }

  static List<Use> parseRecent(String text) {
    List<Use> uses = new ArrayList<>();
    for (String item : text.split(" ")) {
      if (item.length() < 2) {
        continue;
      }
      UseKind kind = UseKind.fromCode(item.charAt(0))
          .orElseThrow(() -> new IllegalStateException("unknown use code in recent_uses: " + item));
      uses.add(new Use(kind, Instant.ofEpochMilli(Long.parseLong(item.substring(1)))));
    }
    return uses;
  }
}
