package io.engram.reflection;

import io.engram.memory.Activation;
import io.engram.memory.MemoryDocument;
import io.engram.memory.MemoryMaintenance;
import io.engram.memory.MemoryRecord;
import io.engram.memory.MemorySearch;
import io.engram.memory.MemoryState;
import io.engram.memory.ReflectionReads;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.apache.lucene.util.VectorUtil;

/**
 * Reads an organization's candidate and durable memories subject by subject and proposes what
 * each process should change; nothing is written here. Within a subject every pair is compared
 * (a SIMD dot product of the stored vectors) up to {@value #ALL_PAIRS_LIMIT} memories; a larger
 * subject is walked in pages and each memory is compared with its {@value #NEIGHBOURS} nearest
 * neighbours from the vector index instead. docs/reflection.md describes each rule.
 */
final class ReflectionPlanner {
  static final int ALL_PAIRS_LIMIT = 10_000;
  static final int PAGE = 1_000;
  static final int NEIGHBOURS = 16;
  private static final List<MemoryState> LOADED =
      List.of(MemoryState.CANDIDATE, MemoryState.DURABLE);

  /** What a run will do, and how many memories it looked at. */
  record Plan(List<Proposal> proposals, long examined) {}

  private record Pair(MemoryRecord a, MemoryRecord b, double similarity) {}

  private final MemoryMaintenance memory;
  private final ReflectionSettings settings;
  private final Set<ReflectionProcess> processes;
  private final Instant now;
  private final Map<String, List<String>> staleFlags;
  private final Map<String, List<String>> conflictFlags;
  private final Runnable heartbeat;
  private final int allPairsLimit;
  private final List<Proposal> proposals = new ArrayList<>();
  private final Set<String> durableIds = new HashSet<>();
  private long examined;

  ReflectionPlanner(
      MemoryMaintenance memory,
      ReflectionSettings settings,
      Set<ReflectionProcess> processes,
      Instant now,
      Map<String, List<String>> staleFlags,
      Map<String, List<String>> conflictFlags,
      Runnable heartbeat,
      int allPairsLimit) {
    this.memory = memory;
    this.settings = settings;
    this.processes = processes;
    this.now = now;
    this.staleFlags = staleFlags;
    this.conflictFlags = conflictFlags;
    this.heartbeat = heartbeat;
    this.allPairsLimit = allPairsLimit;
  }

  Plan plan(String orgId) {
    Map<String, List<String>> subjects = new TreeMap<>();
    Map<String, Integer> sizes = new HashMap<>();
    for (ReflectionReads.SubjectCount subject : memory.subjects(orgId, LOADED)) {
      String key = subject.subject() == null ? "" : MemoryDocument.subjectKey(subject.subject());
      subjects.computeIfAbsent(key, k -> new ArrayList<>()).add(subject.subject());
      sizes.merge(key, subject.count(), Integer::sum);
    }
    for (Map.Entry<String, List<String>> subject : subjects.entrySet()) {
      heartbeat.run();
      if (sizes.get(subject.getKey()) <= allPairsLimit) {
        List<MemoryRecord> members =
            memory.withSubjects(orgId, subject.getValue(), LOADED, null, Integer.MAX_VALUE);
        planSubject(members, allPairs(members));
      } else {
        planLargeSubject(orgId, subject.getValue());
      }
    }
    clearResolvedFlags();
    return new Plan(List.copyOf(proposals), examined);
  }

  private void planLargeSubject(String orgId, List<String> variants) {
    List<MemoryRecord> members = new ArrayList<>();
    List<Pair> pairs = new ArrayList<>();
    Set<String> compared = new HashSet<>();
    String after = null;
    List<MemoryRecord> page;
    do {
      heartbeat.run();
      page = memory.withSubjects(orgId, variants, LOADED, after, PAGE);
      for (MemoryRecord m : page) {
        List<String> ids = memory.neighbours(m, NEIGHBOURS).stream()
            .map(MemorySearch.Hit::memoryId)
            .filter(id -> !id.equals(m.id()))
            .toList();
        for (MemoryRecord other : memory.findAll(orgId, ids).values()) {
          String key = m.id().compareTo(other.id()) < 0
              ? m.id() + " " + other.id()
              : other.id() + " " + m.id();
          if (sameSubject(m, other) && compared.add(key)) {
            pairs.add(new Pair(m, other, VectorUtil.dotProduct(m.embedding(), other.embedding())));
          }
        }
      }
      // Keeps a large subject's member list light: the pairs hold the vectors they need.
      members.addAll(page.stream().map(MemoryRecord::withoutEmbedding).toList());
      after = page.isEmpty() ? after : page.getLast().id();
    } while (page.size() == PAGE);
    planSubject(members, pairs);
  }

  private static boolean sameSubject(MemoryRecord a, MemoryRecord b) {
    return a.subject() == null
        ? b.subject() == null
        : b.subject() != null
            && MemoryDocument.subjectKey(a.subject())
                .equals(MemoryDocument.subjectKey(b.subject()));
  }

  /**
   * Every pair of the subject that some process acts on: similar enough to merge or corroborate,
   * or to be a conflict. Pairs that are only topically close are dropped as they are found, since
   * a subject of thousands of look-alike memories has millions of them.
   */
  private List<Pair> allPairs(List<MemoryRecord> members) {
    double keep = Math.min(
        settings.consolidation().similarityThreshold(),
        settings.candidates().corroborationThreshold());
    double conflictFloor =
        on(ReflectionProcess.CONFLICT_DETECTION) ? settings.conflicts().minSimilarity() : 2;
    ConflictRule.Reading[] readings = new ConflictRule.Reading[members.size()];
    List<Pair> pairs = new ArrayList<>();
    for (int i = 0; i < members.size(); i++) {
      if (i % 256 == 0) {
        heartbeat.run(); // a subject of 10,000 takes seconds: keep the lease, notice a shutdown
      }
      MemoryRecord a = members.get(i);
      float[] vector = a.embedding();
      for (int j = i + 1; j < members.size(); j++) {
        MemoryRecord b = members.get(j);
        double similarity = VectorUtil.dotProduct(vector, b.embedding());
        if (similarity >= keep
            || similarity >= conflictFloor
                && couldConflict(a, b)
                && ConflictRule.mayConflict(
                    reading(readings, members, i), reading(readings, members, j))) {
          pairs.add(new Pair(a, b, similarity));
        }
      }
    }
    return pairs;
  }

  private static boolean couldConflict(MemoryRecord a, MemoryRecord b) {
    return a.state() == MemoryState.DURABLE && b.state() == MemoryState.DURABLE && sameOwner(a, b);
  }

  /** Two memories of one boundary: same agent and same end user (never two users' memories). */
  private static boolean sameOwner(MemoryRecord a, MemoryRecord b) {
    return Objects.equals(a.agent(), b.agent()) && Objects.equals(a.endUser(), b.endUser());
  }

  private static ConflictRule.Reading reading(
      ConflictRule.Reading[] readings, List<MemoryRecord> members, int i) {
    if (readings[i] == null) {
      readings[i] = ConflictRule.Reading.of(members.get(i).text());
    }
    return readings[i];
  }

  private void planSubject(List<MemoryRecord> members, List<Pair> pairs) {
    examined += members.size();
    members.stream()
        .filter(m -> m.state() == MemoryState.DURABLE)
        .forEach(m -> durableIds.add(m.id()));
    Set<String> conflicting =
        on(ReflectionProcess.CONFLICT_DETECTION) ? planConflicts(pairs) : Set.of();
    Set<String> merged =
        on(ReflectionProcess.CONSOLIDATION) ? planConsolidation(pairs, conflicting) : Set.of();
    if (on(ReflectionProcess.CANDIDATE_EVALUATION)) {
      planCandidates(members, pairs);
    }
    if (on(ReflectionProcess.DECAY)) {
      members.stream()
          .filter(m -> m.state() == MemoryState.DURABLE && !merged.contains(m.id()))
          .forEach(this::planDecay);
    }
  }

  private boolean on(ReflectionProcess process) {
    if (!processes.contains(process)) {
      return false;
    }
    return switch (process) {
      case CONSOLIDATION -> settings.consolidation().enabled();
      case DECAY -> settings.decay().enabled();
      case CANDIDATE_EVALUATION -> settings.candidates().enabled();
      case CONFLICT_DETECTION -> settings.conflicts().enabled();
    };
  }

  /** How far apart two contradicting memories must start for the later to replace the earlier. */
  static final Duration UPDATE_GAP = Duration.ofMinutes(1);

  // ---- conflict detection

  /** Flags new contradictions; returns the pairs ("a b") that contradict, which must never be merged. */
  private Set<String> planConflicts(List<Pair> pairs) {
    Set<String> conflicting = new HashSet<>();
    Map<String, ConflictRule.Reading> readings = new HashMap<>();
    for (Pair pair : pairs) {
      MemoryRecord a = pair.a();
      MemoryRecord b = pair.b();
      if (!couldConflict(a, b)
          || pair.similarity() < settings.conflicts().minSimilarity()
          || history(a, b)
          || history(b, a)) {
        continue;
      }
      Optional<String> why = ConflictRule.check(
          a,
          readings.computeIfAbsent(a.id(), id -> ConflictRule.Reading.of(a.text())),
          b,
          readings.computeIfAbsent(b.id(), id -> ConflictRule.Reading.of(b.text())));
      if (why.isEmpty()) {
        continue;
      }
      conflicting.add(pairKey(a, b));
      Optional<Proposal> supersession = supersession(a, b, why.get(), pair.similarity());
      if (supersession.isPresent()) {
        proposals.add(supersession.get());
        continue;
      }
      if (!conflictFlags.getOrDefault(a.id(), List.of()).contains(b.id())) {
        proposals.add(new Proposal(
            ChangeKind.FLAG_CONFLICT,
            a.id(),
            b.id(),
            why.get() + String.format(Locale.ROOT, " (similarity %.3f)", pair.similarity()),
            Map.of("state", a.state().id(), "flags", List.of()),
            Map.of("state", a.state().id(), "flags", List.of("conflict"))));
      }
    }
    return conflicting;
  }

  /**
   * When two contradicting memories started at different times (their {@code validFrom}, else when
   * they happened), the newer replaces the older from its start: the older stays true for the past
   * ("as of" then finds it) and drops out of what is true now. Memories of one instant cannot be
   * ordered, nor two written within {@link #UPDATE_GAP} of each other (a batch of writes, not a
   * change over time): those are flagged for a person instead.
   */
  private static Optional<Proposal> supersession(
      MemoryRecord a, MemoryRecord b, String why, double similarity) {
    Instant startA = start(a);
    Instant startB = start(b);
    if (Duration.between(startA, startB).abs().compareTo(UPDATE_GAP) < 0
        || a.validity().validUntil() != null
        || b.validity().validUntil() != null) {
      return Optional.empty();
    }
    MemoryRecord older = startA.isBefore(startB) ? a : b;
    MemoryRecord newer = older == a ? b : a;
    Instant from = start(newer);
    return Optional.of(new Proposal(
        ChangeKind.SUPERSEDE,
        older.id(),
        newer.id(),
        why + String.format(Locale.ROOT, " (similarity %.3f); ", similarity) + newer.id()
            + " is newer: " + older.id() + " holds until " + from,
        Map.of("state", older.state().id(), ChangeApplier.VALID_UNTIL, "open"),
        Map.of("state", older.state().id(), ChangeApplier.VALID_UNTIL, from.toString())));
  }

  /** Whether {@code older} stopped holding by the time {@code newer} starts: no contradiction. */
  private static boolean history(MemoryRecord older, MemoryRecord newer) {
    Instant until = older.validity().validUntil();
    return until != null && !until.isAfter(start(newer));
  }

  private static Instant start(MemoryRecord memory) {
    return memory.validity().validFrom() != null
        ? memory.validity().validFrom()
        : memory.occurredAt();
  }

  private static String pairKey(MemoryRecord a, MemoryRecord b) {
    return a.id().compareTo(b.id()) < 0 ? a.id() + " " + b.id() : b.id() + " " + a.id();
  }

  // ---- consolidation

  /** Proposes merges of near-duplicate clusters into their most active member; returns every clustered id. */
  private Set<String> planConsolidation(List<Pair> pairs, Set<String> conflicting) {
    double threshold = settings.consolidation().similarityThreshold();
    Map<String, String> parent = new HashMap<>();
    Map<String, MemoryRecord> byId = new HashMap<>();
    Map<String, Double> similarity = new HashMap<>();
    for (Pair pair : pairs) {
      if (pair.similarity() >= threshold
          && pair.a().state() == MemoryState.DURABLE
          && pair.b().state() == MemoryState.DURABLE
          && sameOwner(pair.a(), pair.b())
          && !conflicting.contains(pairKey(pair.a(), pair.b()))) {
        byId.put(pair.a().id(), pair.a());
        byId.put(pair.b().id(), pair.b());
        union(parent, pair.a().id(), pair.b().id());
        similarity.put(pairKey(pair.a(), pair.b()), pair.similarity());
      }
    }
    Map<String, List<MemoryRecord>> clusters = new TreeMap<>();
    byId.values()
        .forEach(m -> clusters
            .computeIfAbsent(find(parent, m.id()), k -> new ArrayList<>())
            .add(m));
    for (List<MemoryRecord> cluster : clusters.values()) {
      MemoryRecord survivor = cluster.stream()
          .max(Comparator.comparingDouble(this::activation)
              .thenComparingLong(m -> m.uses().count())
              .thenComparing(MemoryRecord::createdAt, Comparator.reverseOrder())
              .thenComparing(MemoryRecord::id, Comparator.reverseOrder()))
          .orElseThrow();
      cluster.stream()
          .filter(m -> m != survivor)
          .sorted(Comparator.comparing(MemoryRecord::id))
          .forEach(m -> {
            Double direct = similarity.get(pairKey(m, survivor));
            double sim = direct != null ? direct : similarityOf(m, survivor);
            if (sim >= threshold && !conflicting.contains(pairKey(m, survivor))) {
              proposals.add(new Proposal(
                  ChangeKind.MERGE,
                  m.id(),
                  survivor.id(),
                  String.format(
                      Locale.ROOT,
                      "near-duplicate of %s on subject '%s' (similarity %.3f >= %.3f); %s is more active and survives",
                      survivor.id(),
                      Objects.requireNonNullElse(m.subject(), "(none)"),
                      sim,
                      threshold,
                      survivor.id()),
                  Map.of("absorbed", AuditView.of(m, now), "survivor", AuditView.of(survivor, now)),
                  Map.of(
                      "absorbed",
                      Map.of("state", MemoryState.SUPPRESSED.id(), "mergedInto", survivor.id()),
                      "survivor",
                      Map.of(
                          "useCount",
                          survivor.uses().count() + m.uses().count(),
                          "confidence",
                          Math.max(survivor.confidence(), m.confidence())))));
            }
          });
    }
    return byId.keySet();
  }

  private static double similarityOf(MemoryRecord a, MemoryRecord b) {
    return a.embedding() == null || b.embedding() == null
        ? 0
        : VectorUtil.dotProduct(a.embedding(), b.embedding());
  }

  private static void union(Map<String, String> parent, String a, String b) {
    parent.put(find(parent, a), find(parent, b));
  }

  private static String find(Map<String, String> parent, String id) {
    String root = id;
    while (parent.containsKey(root) && !parent.get(root).equals(root)) {
      root = parent.get(root);
    }
    return root;
  }

  // ---- candidate evaluation

  private void planCandidates(List<MemoryRecord> members, List<Pair> pairs) {
    ReflectionSettings.Candidates rules = settings.candidates();
    Map<String, Pair> corroboration = new HashMap<>();
    for (Pair pair : pairs) {
      MemoryRecord candidate = pair.a().state() == MemoryState.CANDIDATE ? pair.a() : pair.b();
      MemoryRecord durable = candidate == pair.a() ? pair.b() : pair.a();
      if (candidate.state() == MemoryState.CANDIDATE
          && durable.state() == MemoryState.DURABLE
          && (durable.agent() == null || durable.agent().equals(candidate.agent()))
          && (durable.endUser() == null || durable.endUser().equals(candidate.endUser()))
          && pair.similarity() >= rules.corroborationThreshold()) {
        corroboration.merge(
            candidate.id(), pair, (x, y) -> x.similarity() >= y.similarity() ? x : y);
      }
    }
    for (MemoryRecord candidate : members) {
      if (candidate.state() != MemoryState.CANDIDATE) {
        continue;
      }
      Pair best = corroboration.get(candidate.id());
      Map<String, Object> before = AuditView.of(candidate, now);
      if (best != null) {
        MemoryRecord durable = best.a() == candidate ? best.b() : best.a();
        proposals.add(new Proposal(
            ChangeKind.PROMOTE,
            candidate.id(),
            durable.id(),
            String.format(
                Locale.ROOT,
                "corroborated by durable memory %s (similarity %.3f >= %.3f)",
                durable.id(),
                best.similarity(),
                rules.corroborationThreshold()),
            before,
            Map.of("state", MemoryState.DURABLE.id())));
      } else if (rules.autoApproveConfidence() != null
          && candidate.confidence() >= rules.autoApproveConfidence()) {
        proposals.add(new Proposal(
            ChangeKind.PROMOTE,
            candidate.id(),
            null,
            String.format(
                Locale.ROOT,
                "confidence %.3f >= %.3f",
                candidate.confidence(),
                rules.autoApproveConfidence()),
            before,
            Map.of("state", MemoryState.DURABLE.id())));
      } else if (rules.expireAfterDays() != null
          && candidate
                  .createdAt()
                  .plus(Duration.ofDays(rules.expireAfterDays()))
                  .compareTo(now)
              <= 0) {
        proposals.add(new Proposal(
            ChangeKind.EXPIRE,
            candidate.id(),
            null,
            "unreviewed for "
                + Duration.between(candidate.createdAt(), now).toDays() + " days (expiry "
                + rules.expireAfterDays()
                + " days)",
            before,
            Map.of("state", MemoryState.TOMBSTONED.id())));
      }
    }
  }

  // ---- decay

  private void planDecay(MemoryRecord m) {
    ReflectionSettings.Decay rules = settings.decay();
    Instant since = now.minus(Duration.ofDays(rules.belowForDays()));
    // Activation only falls between uses, so it stayed below the threshold for the whole period
    // exactly when nothing used the memory since then and it was already below at the start.
    double then = Activation.normalized(Activation.baseLevel(m.uses(), since));
    boolean decayed = !m.uses().lastUsedAt().isAfter(since) && then < rules.activationThreshold();
    boolean flagged = staleFlags.containsKey(m.id());
    Map<String, Object> before = AuditView.of(m, now);
    if (decayed && rules.action() == ReflectionSettings.DecayAction.SUPPRESS) {
      proposals.add(new Proposal(
          ChangeKind.SUPPRESS,
          m.id(),
          null,
          decayReason(m, then, rules),
          before,
          Map.of("state", MemoryState.SUPPRESSED.id())));
    } else if (decayed && !flagged) {
      proposals.add(new Proposal(
          ChangeKind.FLAG_STALE,
          m.id(),
          null,
          decayReason(m, then, rules),
          before,
          Map.of("state", m.state().id(), "flags", List.of("stale"))));
    } else if (!decayed && flagged) {
      proposals.add(new Proposal(
          ChangeKind.CLEAR_STALE,
          m.id(),
          null,
          "used again since it was flagged (last use "
              + m.uses().lastUsedAt() + "); activation no longer below the threshold for "
              + rules.belowForDays()
              + " days",
          before,
          Map.of("state", m.state().id(), "flags", List.of())));
    }
  }

  private String decayReason(MemoryRecord m, double then, ReflectionSettings.Decay rules) {
    return String.format(
        Locale.ROOT,
        "activation below %.3f for at least %d days (%.3f then, %.3f now; last used %s)",
        rules.activationThreshold(),
        rules.belowForDays(),
        then,
        activation(m),
        m.uses().lastUsedAt());
  }

  private double activation(MemoryRecord m) {
    return Activation.normalized(Activation.baseLevel(m.uses(), now));
  }

  // ---- flags whose memory left the durable state

  private void clearResolvedFlags() {
    if (on(ReflectionProcess.DECAY)) {
      staleFlags.keySet().stream()
          .filter(id -> !durableIds.contains(id))
          .sorted()
          .forEach(id -> proposals.add(new Proposal(
              ChangeKind.CLEAR_STALE,
              id,
              null,
              "no longer durable",
              Map.of("flags", List.of("stale")),
              Map.of("flags", List.of()))));
    }
    if (on(ReflectionProcess.CONFLICT_DETECTION)) {
      conflictFlags.entrySet().stream()
          .sorted(Map.Entry.comparingByKey())
          .forEach(flag -> flag.getValue().stream()
              .filter(other -> flag.getKey().compareTo(other) < 0
                  && (!durableIds.contains(flag.getKey()) || !durableIds.contains(other)))
              .sorted()
              .forEach(other -> proposals.add(new Proposal(
                  ChangeKind.CLEAR_CONFLICT,
                  flag.getKey(),
                  other,
                  (durableIds.contains(flag.getKey()) ? other : flag.getKey())
                      + " is no longer durable",
                  Map.of("flags", List.of("conflict")),
                  Map.of("flags", List.of())))));
    }
  }
}
