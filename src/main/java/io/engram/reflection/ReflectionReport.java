package io.engram.reflection;

import io.engram.memory.Activation;
import io.engram.memory.MemoryMaintenance;
import io.engram.memory.MemoryState;
import io.engram.platform.http.ApiException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The report behind the reflection metrics routes: current state, summaries, trends and
 * distributions, computed from the data on every call (nothing cached, so they always agree with
 * the memories, runs and events they describe). The figures come from {@link ReflectionStore};
 * this class shapes them.
 */
public final class ReflectionReport {
  private static final Pattern SPAN = Pattern.compile("([1-9][0-9]{0,4})([hd])");
  static final Duration MAX_WINDOW = Duration.ofDays(365);
  static final int MAX_BUCKETS = 400;
  static final int ACTIVATION_BINS = 10;
  private static final double[] AGE_EDGES_DAYS = {0, 1, 7, 30, 90, 365};

  private final ReflectionStore store;
  private final MemoryMaintenance memory;
  private final ReflectionService reflection;
  private final Clock clock;

  public ReflectionReport(ReflectionService reflection, MemoryMaintenance memory, Clock clock) {
    this.store = reflection.store();
    this.memory = memory;
    this.reflection = reflection;
    this.clock = clock;
  }

  /** "7d", "24h": a window or bucket length, 1 hour to 365 days. */
  public static Duration span(String name, String raw, Duration fallback) {
    if (raw == null) {
      return fallback;
    }
    Matcher m = SPAN.matcher(raw.strip());
    Duration span = m.matches()
        ? (m.group(2).equals("h")
            ? Duration.ofHours(Long.parseLong(m.group(1)))
            : Duration.ofDays(Long.parseLong(m.group(1))))
        : null;
    if (span == null || span.compareTo(MAX_WINDOW) > 0) {
      throw ApiException.badRequest(
          name,
          "'" + name + "' must be a number of hours or days such as 24h or 30d, at " + "most 365d");
    }
    return span;
  }

  /** Now: memories by state, open flags, runs so far and the next scheduled one, changes so far. */
  public Map<String, Object> current(String orgId) {
    Map<String, Object> view = new LinkedHashMap<>();
    Map<String, Long> byState = new LinkedHashMap<>();
    memory.countByState(orgId).forEach((state, n) -> byState.put(state.id(), n));
    view.put(
        "memories",
        Map.of(
            "total",
            byState.values().stream().mapToLong(Long::longValue).sum(),
            "byState",
            byState));
    Map<String, Long> flags =
        new LinkedHashMap<>(Map.of(ChangeApplier.FLAG_STALE, 0L, "conflicts", 0L));
    store
        .openFlags(orgId)
        .entrySet()
        .forEach(e -> flags.put(
            e.getKey().equals(ChangeApplier.FLAG_CONFLICT) ? "conflicts" : e.getKey(),
            // A conflict is flagged on both of its memories.
            e.getKey().equals(ChangeApplier.FLAG_CONFLICT) ? e.getValue() / 2 : e.getValue()));
    view.put("openFlags", flags);
    Map<String, Object> runs = runCounts(orgId, Instant.EPOCH, windowEnd());
    ReflectionSettings settings = reflection.settings(orgId);
    Instant next = reflection.nextRunAt(orgId, settings);
    runs.put("nextScheduledAt", next == null ? null : next.toString());
    view.put("runs", runs);
    view.put("changes", changeCounts(orgId, Instant.EPOCH, windowEnd()));
    return view;
  }

  /** Runs and changes within the window ending now. */
  public Map<String, Object> summary(String orgId, Duration window) {
    Instant until = windowEnd();
    Instant since = until.minus(window);
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("since", since.toString());
    view.put("until", until.toString());
    view.put("runs", runCounts(orgId, since, until));
    view.put("changes", changeCounts(orgId, since, until));
    return view;
  }

  /** Windows end now, inclusive: what happened this millisecond is in (ends are exclusive in the queries). */
  private Instant windowEnd() {
    return clock.instant().plusMillis(1);
  }

  private Map<String, Object> runCounts(String orgId, Instant since, Instant until) {
    ReflectionStore.RunCounts runs = store.runCounts(orgId, since, until);
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("total", runs.total());
    view.put("completed", runs.completed());
    view.put("failed", runs.failed());
    view.put("running", runs.running());
    view.put("dryRuns", runs.dryRuns());
    view.put("scheduled", runs.scheduled());
    view.put("manual", runs.manual());
    view.put("memoriesExamined", runs.examined());
    view.put(
        "averageDurationMs",
        runs.completed() == 0 ? null : runs.completedMillis() / runs.completed());
    view.put("longestDurationMs", runs.longest());
    return view;
  }

  private Map<String, Object> changeCounts(String orgId, Instant since, Instant until) {
    Map<String, Map<String, Long>> byOutcome = new LinkedHashMap<>();
    for (ReflectionEvent.Outcome outcome : ReflectionEvent.Outcome.values()) {
      byOutcome.put(outcome.id(), new LinkedHashMap<>());
    }
    long undone = 0;
    for (ReflectionStore.ChangeCount count : store.changeCounts(orgId, since, until)) {
      byOutcome.get(count.outcome()).put(count.change(), count.count());
      undone += count.undone();
    }
    Map<String, Object> view = new LinkedHashMap<>(byOutcome);
    view.put("undone", undone);
    return view;
  }

  /** Runs and applied changes per bucket over the window ending now, oldest bucket first. */
  public Map<String, Object> trend(String orgId, Duration window, Duration bucket) {
    long buckets = (window.toMillis() + bucket.toMillis() - 1) / bucket.toMillis();
    if (bucket.compareTo(window) > 0 || buckets > MAX_BUCKETS) {
      throw ApiException.badRequest(
          "bucket",
          "'bucket' must be no longer than the window, and the window at most " + MAX_BUCKETS
              + " buckets long");
    }
    Instant until = windowEnd();
    Instant since = until.minus(bucket.multipliedBy(buckets));
    List<Map<String, Object>> series = new ArrayList<>();
    for (int i = 0; i < buckets; i++) {
      Map<String, Object> point = new LinkedHashMap<>();
      point.put("start", since.plus(bucket.multipliedBy(i)).toString());
      point.put("end", since.plus(bucket.multipliedBy(i + 1)).toString());
      point.put("runs", 0L);
      point.put("applied", 0L);
      point.put("proposed", 0L);
      point.put("undone", 0L);
      point.put("byChange", new LinkedHashMap<String, Long>());
      series.add(point);
    }
    long width = bucket.toMillis();
    store
        .runsPerBucket(orgId, since, until, width)
        .forEach((b, n) -> series.get(b).put("runs", n));
    for (ReflectionStore.ChangeCount count : store.changesPerBucket(orgId, since, until, width)) {
      Map<String, Object> point = series.get(count.bucket());
      if (!count.outcome().equals(ReflectionEvent.Outcome.SKIPPED.id())) {
        point.merge(count.outcome(), count.count(), (a, b) -> (Long) a + (Long) b);
      }
      if (count.outcome().equals(ReflectionEvent.Outcome.APPLIED.id())) {
        @SuppressWarnings("unchecked")
        Map<String, Long> byChange = (Map<String, Long>) point.get("byChange");
        byChange.merge(count.change(), count.count(), Long::sum);
      }
      point.merge("undone", count.undone(), (a, b) -> (Long) a + (Long) b);
    }
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("since", since.toString());
    view.put("until", until.toString());
    view.put("bucket", bucket.toString());
    view.put("series", series);
    return view;
  }

  /**
   * Histograms over the organization's memories in one state (all states when null): normalized
   * activation and confidence in ten equal bins, age in days since the memory was stored, and the
   * count per state.
   */
  public Map<String, Object> distribution(String orgId, MemoryState state) {
    Instant now = clock.instant();
    long[] activation = new long[ACTIVATION_BINS];
    long[] confidence = new long[ACTIVATION_BINS];
    long[] age = new long[AGE_EDGES_DAYS.length];
    long[] count = {0};
    memory.forEachVitals(orgId, state, v -> {
      count[0]++;
      activation[bin(Activation.normalized(Activation.baseLevel(v.uses(), now)))]++;
      confidence[bin(v.confidence())]++;
      double days = Duration.between(v.createdAt(), now).toMillis() / 86_400_000.0;
      int i = AGE_EDGES_DAYS.length - 1;
      while (i > 0 && days < AGE_EDGES_DAYS[i]) {
        i--;
      }
      age[i]++;
    });
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("state", state == null ? "all" : state.id());
    view.put("count", count[0]);
    view.put("activation", bins(activation));
    view.put("confidence", bins(confidence));
    List<Map<String, Object>> ages = new ArrayList<>();
    for (int i = 0; i < age.length; i++) {
      Map<String, Object> bin = new LinkedHashMap<>();
      bin.put("fromDays", AGE_EDGES_DAYS[i]);
      bin.put("toDays", i + 1 < AGE_EDGES_DAYS.length ? AGE_EDGES_DAYS[i + 1] : null);
      bin.put("count", age[i]);
      ages.add(bin);
    }
    view.put("ageDays", ages);
    Map<String, Long> states = new LinkedHashMap<>();
    memory.countByState(orgId).forEach((s, n) -> states.put(s.id(), n));
    view.put("states", states);
    return view;
  }

  private static int bin(double value) {
    return Math.min(ACTIVATION_BINS - 1, Math.max(0, (int) Math.floor(value * ACTIVATION_BINS)));
  }

  private static List<Map<String, Object>> bins(long[] counts) {
    List<Map<String, Object>> bins = new ArrayList<>();
    for (int i = 0; i < counts.length; i++) {
      Map<String, Object> bin = new LinkedHashMap<>();
      bin.put("from", i / (double) counts.length);
      bin.put("to", (i + 1) / (double) counts.length);
      bin.put("count", counts[i]);
      bins.add(bin);
    }
    return bins;
  }
}
