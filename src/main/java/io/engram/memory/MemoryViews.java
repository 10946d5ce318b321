package io.engram.memory;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The JSON shapes of the memory routes (camelCase, as the memory spec writes its fields). */
public final class MemoryViews {

  private MemoryViews() {}

  public static Map<String, Object> memory(MemoryRecord m) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("id", m.id());
    view.put("object", "memory");
    view.put("text", m.text());
    view.put("subject", m.subject());
    view.put("memoryKind", m.kind().id());
    view.put("confidence", m.confidence());
    view.put("state", m.state().id());
    view.put("agent", m.agent());
    view.put("userId", m.endUser());
    view.put("sessionId", m.session());
    view.put("source", m.origin().source().id());
    view.put("eventId", m.origin().eventId());
    view.put(
        "metadata", m.metadataJson() == null ? null : Json.read(m.metadataJson(), JsonNode.class));
    view.put("occurredAt", m.occurredAt().toString());
    Validity validity = m.validity();
    view.put(
        "validFrom", validity.validFrom() == null ? null : validity.validFrom().toString());
    view.put(
        "validUntil",
        validity.validUntil() == null ? null : validity.validUntil().toString());
    view.put(
        "expiresAt", validity.expiresAt() == null ? null : validity.expiresAt().toString());
    view.put("supersedes", validity.supersedes());
    view.put("createdAt", m.createdAt().toString());
    view.put("updatedAt", m.updatedAt().toString());
    view.put("lastUsedAt", m.uses().lastUsedAt().toString());
    view.put("useCount", m.uses().count());
    view.put("reinforcementCount", m.counts().reinforcements());
    view.put("retrievalCount", m.counts().retrievals());
    return view;
  }

  /**
   * A memory as one line of an export: its view, its transitions (its provenance), what activation
   * reads of its uses, and (with
   * {@code embedding}) its vector with the model and the text it was computed from, so an import
   * on the same model keeps it instead of running the model again.
   */
  public static Map<String, Object> exported(
      MemoryRecord m, boolean embedding, List<Transition> transitions) {
    Map<String, Object> view = memory(m);
    view.put("transitions", transitions.stream().map(MemoryViews::transition).toList());
    Map<String, Object> uses = new LinkedHashMap<>();
    uses.put(
        "recent",
        m.uses().recent().stream()
            .map(use -> {
              Map<String, Object> one = new LinkedHashMap<>(); // in this order, every export
              one.put("kind", use.kind().id());
              one.put("at", use.at().toString());
              return one;
            })
            .toList());
    uses.put("olderCount", m.uses().olderCount());
    uses.put("olderWeight", m.uses().olderWeight());
    uses.put("firstUseAt", m.uses().firstUseAt().toString());
    view.put("uses", uses);
    if (embedding && m.embedding() != null && m.embedding().length > 0) {
      Map<String, Object> vector = new LinkedHashMap<>();
      vector.put("model", Embedder.MODEL_ID);
      vector.put("textSha256", io.engram.platform.Digests.sha256(m.indexedText()));
      vector.put(
          "vector", java.util.Base64.getEncoder().encodeToString(Embedder.toBytes(m.embedding())));
      view.put("embedding", vector);
    }
    return view;
  }

  static Map<String, Object> staging(EventPipeline.Plan plan, List<MemoryRecord> candidates) {
    List<Map<String, Object>> statements = new ArrayList<>();
    int next = 0;
    for (EventPipeline.Statement statement : plan.statements()) {
      Map<String, Object> view = new LinkedHashMap<>();
      view.put("text", statement.text());
      view.put(
          "candidateId", statement.skipReason() == null ? candidates.get(next++).id() : null);
      view.put("skipped", statement.skipReason());
      statements.add(view);
    }
    return Map.of(
        "statements",
        statements,
        "candidateIds",
        candidates.stream().map(MemoryRecord::id).toList());
  }

  static Map<String, Object> event(BusinessEvent e) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("id", e.id());
    view.put("object", "business_event");
    view.put("type", e.type());
    view.put("source", e.source());
    view.put("subject", e.subject());
    view.put("text", e.text());
    view.put(
        "metadata", e.metadataJson() == null ? null : Json.read(e.metadataJson(), JsonNode.class));
    view.put("agent", e.agent());
    view.put("userId", e.endUser());
    view.put("sessionId", e.session());
    view.put("receivedAt", e.receivedAt().toString());
    view.put("staging", Json.read(e.stagingJson(), JsonNode.class));
    return view;
  }

  static Map<String, Object> transition(Transition t) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("from", t.from() == null ? null : t.from().id());
    view.put("to", t.to().id());
    view.put("action", t.action());
    view.put("reason", t.reason());
    view.put("actor", t.actor());
    view.put("credentialId", t.credentialId());
    view.put("userId", t.userId());
    view.put("requestId", t.requestId());
    view.put("at", t.at().toString());
    return view;
  }

  static Map<String, Object> provenance(MemoryReads.Provenance p) {
    MemoryRecord m = p.memory();
    Map<String, Object> origin = new LinkedHashMap<>();
    origin.put("source", m.origin().source().id());
    origin.put("eventId", m.origin().eventId());
    origin.put("event", p.event() == null ? null : event(p.event()));
    origin.put("credentialId", m.origin().author().credentialId());
    origin.put("userId", m.origin().author().userId());
    origin.put("requestId", m.origin().author().requestId());
    origin.put("idempotencyKey", m.origin().idempotencyKey());
    origin.put("agent", m.agent());
    origin.put("createdAt", m.createdAt().toString());
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("memory", memory(m));
    view.put("origin", origin);
    view.put(
        "transitions", p.transitions().stream().map(MemoryViews::transition).toList());
    view.put("uses", uses(m, p.answers(), p.at()));
    return view;
  }

  private static Map<String, Object> uses(MemoryRecord m, long answers, Instant at) {
    double baseLevel = Activation.baseLevel(m.uses(), at);
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("total", m.uses().count());
    view.put("reinforcements", m.counts().reinforcements());
    // Retrievals (and injections into a prompt) are counted; only answers that drew on the memory
    // feed its activation.
    view.put("retrievals", m.counts().retrievals());
    view.put("answers", answers);
    view.put("firstUseAt", m.uses().firstUseAt().toString());
    view.put("lastUsedAt", m.uses().lastUsedAt().toString());
    view.put(
        "recent",
        m.uses().recent().stream()
            .map(u -> Map.of("kind", u.kind().id(), "at", u.at().toString()))
            .toList());
    view.put(
        "activation",
        Map.of(
            "baseLevel",
            round(baseLevel),
            "normalized",
            round(Activation.normalized(baseLevel)),
            "at",
            at.toString()));
    return view;
  }

  public static Map<String, Object> ranked(ActivationRanker.Ranked r) {
    Map<String, Object> view = memory(r.memory());
    ActivationRanker.Explanation e = r.explanation();
    view.put("score", round(e.score()));
    Map<String, Object> explanation = new LinkedHashMap<>();
    explanation.put(
        "lexical",
        e.lexicalRank() == null ? null : Map.of("rank", e.lexicalRank(), "bm25", round(e.bm25())));
    explanation.put("vector", e.similarity() == null ? null : vector(e));
    explanation.put("subjectMatch", e.subjectMatch());
    explanation.put("timeMatch", e.timeMatch());
    explanation.put("answerMatch", e.answerMatch());
    explanation.put("relevance", round(e.relevance()));
    explanation.put(
        "activation",
        Map.of("baseLevel", round(e.baseLevel()), "normalized", round(e.activation())));
    explanation.put("confidence", e.confidence());
    // Set when the score was lent by a hit next to it in time (its context); else null.
    explanation.put("contextOf", e.contextOf());
    explanation.put("score", round(e.score()));
    view.put("explanation", explanation);
    return view;
  }

  private static Map<String, Object> vector(ActivationRanker.Explanation e) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("rank", e.vectorRank());
    view.put("similarity", round(e.similarity()));
    return view;
  }

  static double round(double value) {
    return Math.round(value * 10_000) / 10_000.0;
  }
}
