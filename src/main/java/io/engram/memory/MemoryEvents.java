package io.engram.memory;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.access.Principal;
import io.engram.platform.Ids;
import io.engram.platform.http.ApiException;
import io.engram.platform.json.Json;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Developer events in the caller's boundary: each kept as it was sent, with the candidate
 * memories the event pipeline staged from it (for review), and read back by id or listed.
 */
public final class MemoryEvents {
  private final MemoryStore store;
  private final MemoryHistory history;
  private final ChangeLog changeLog;
  private final EventStore events;
  private final Embedder embedder;
  private final Clock clock;

  public MemoryEvents(MemoryStores stores, Embedder embedder, Clock clock) {
    this.store = stores.memories();
    this.history = stores.history();
    this.changeLog = stores.changeLog();
    this.events = stores.events();
    this.embedder = embedder;
    this.clock = clock;
  }

  /** An ingested event and the candidates it staged. */
  public record Ingested(BusinessEvent event, List<MemoryRecord> candidates) {}

  public Ingested ingest(Principal caller, AgentScope scope, EventInput input, String requestId) {
    Instant now = clock.instant();
    EventPipeline.Plan plan = EventPipeline.plan(
        input.text(), input.metadata(), statement -> store.knows(caller.orgId(), scope, statement));
    List<String> staged = plan.staged();
    List<float[]> vectors = staged.isEmpty()
        ? List.of()
        : embedder.embedAll(staged.stream()
            .map(s -> MemoryRecord.indexedText(input.subject(), s))
            .toList());
    String eventId = Ids.newId("evt", now.toEpochMilli());
    List<MemoryRecord> candidates = new ArrayList<>();
    for (int i = 0; i < staged.size(); i++) {
      MemoryRecord.Draft draft = new MemoryRecord.Draft(
          caller.orgId(),
          scope.agent(),
          scope.user(),
          input.session(),
          staged.get(i),
          input.subject(),
          plan.kind(),
          plan.confidence(),
          null,
          Validity.NONE);
      candidates.add(MemoryRecord.created(
          draft,
          MemoryState.CANDIDATE,
          MemoryRecord.Origin.staged(eventId, ChangeAuthor.of(caller, requestId)),
          now,
          now,
          vectors.get(i)));
    }
    BusinessEvent event = new BusinessEvent(
        eventId,
        caller.orgId(),
        scope.agent(),
        scope.user(),
        input.session(),
        input.type(),
        input.source(),
        input.subject(),
        input.text(),
        input.metadata() == null ? null : Json.write(input.metadata()),
        Json.write(MemoryViews.staging(plan, candidates)),
        caller.credentialId(),
        ChangeAuthor.userId(caller),
        requestId,
        now);
    store.database().write(h -> {
      events.insert(h, event);
      for (MemoryRecord candidate : candidates) {
        store.insert(h, candidate);
        history.recordUse(h, candidate.id(), UseKind.ENCODE, now, requestId);
        history.recordTransition(
            h,
            new Transition(
                candidate.id(),
                null,
                MemoryState.CANDIDATE,
                "stage",
                "staged from event " + eventId + " (" + input.type() + ")",
                input.source(),
                caller.credentialId(),
                ChangeAuthor.userId(caller),
                requestId,
                now));
        changeLog.append(h, candidate.id(), now);
      }
      return null;
    });
    return new Ingested(event, candidates);
  }

  public BusinessEvent event(Principal caller, AgentScope scope, String eventId) {
    return events
        .find(caller.orgId(), eventId)
        .filter(e -> scope.owns(e.agent(), e.endUser()))
        .orElseThrow(
            () -> ApiException.notFound("Event " + eventId + " not found in " + scope.describe()));
  }

  public List<BusinessEvent> events(
      Principal caller, AgentScope scope, String type, String source, String before, int limit) {
    return events.list(caller.orgId(), scope, type, source, before, limit);
  }

  /** A developer event as sent; {@code session}: the session it came from, or null. */
  public record EventInput(
      String type,
      String source,
      String subject,
      String text,
      ObjectNode metadata,
      String session) {}
}
