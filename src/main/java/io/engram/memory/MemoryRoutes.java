package io.engram.memory;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.access.Access;
import io.engram.access.Principal;
import io.engram.access.Requires;
import io.engram.access.Scope;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.HttpServer;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.QueryParams;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.javalin.http.Context;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The memory routes of spec 2, each at the organization level ({@code /v1/memory/...}) and inside
 * an agent boundary ({@code /v1/memory/agents/{agent_slug}/...}); the {@code X-Service-Agent}
 * header also names the agent, and {@code userId} (body, query) or {@code X-Engram-User} one end
 * user ({@link EndUsers}). Every route: token scope (401/403), agent and user boundary (403), body
 * (400), then the memory (404, 409).
 */
public final class MemoryRoutes implements RouteModule {
  static final String ORGANIZATION_BASE = "/v1/memory";
  static final String AGENT_BASE = "/v1/memory/agents/{agent_slug}";

  /**
   * The memory API's bases, agent first: Javalin takes the first match, so /v1/memory/agents/x is
   * agent x's, never a memory called "agents".
   */
  public static final List<String> BASES = List.of(AGENT_BASE, ORGANIZATION_BASE);

  private static final Pattern EVENT_TYPE = Pattern.compile("^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,127}$");
  private static final int MAX_PAGE = 200;

  /** What the routes call: reads, writes, events and control. */
  record Parts(
      MemoryReads reads, MemoryWrites writes, MemoryEvents events, MemoryControl control) {}

  private final MemoryReads reads;
  private final MemoryWrites writes;
  private final MemoryEvents events;
  private final MemoryControl control;
  private final ProvenanceNotes notes;
  private final long maxBodyBytes;
  private final Clock clock;

  MemoryRoutes(Parts memory, ProvenanceNotes notes, long maxBodyBytes, Clock clock) {
    this.reads = memory.reads();
    this.writes = memory.writes();
    this.events = memory.events();
    this.control = memory.control();
    this.notes = notes;
    this.maxBodyBytes = maxBodyBytes;
    this.clock = clock;
  }

  @Override
  public void register(Routes routes) {
    // Export, import and erasure are served before these (their modules come first): "export"
    // is no memory's id.
    for (String base : BASES) {
      for (String verb : List.of("/retrieve", "/recall", "/search")) {
        // Searching is memory:read, or knowledge:read: search and nothing else of the memory.
        routes.post(
            base + verb,
            Requires.anyScope(Scope.MEMORY_READ, Scope.KNOWLEDGE_READ),
            this::retrieve);
      }
      routes
          .post(base, Requires.scope(Scope.MEMORY_WRITE), this::encode)
          .get(base, Requires.scope(Scope.MEMORY_READ), this::list)
          .post(base + "/events", Requires.scope(Scope.MEMORY_WRITE), this::ingest)
          .post(base + "/extract", Requires.scope(Scope.MEMORY_WRITE), this::extract)
          .get(base + "/events", Requires.scope(Scope.MEMORY_READ), this::events)
          .get(base + "/events/{event_id}", Requires.scope(Scope.MEMORY_READ), this::event)
          .get(base + "/candidates", Requires.scope(Scope.MEMORY_READ), this::candidates);
      for (MemoryAction action : List.of(
          MemoryAction.REINFORCE,
          MemoryAction.SUPPRESS,
          MemoryAction.RESTORE,
          MemoryAction.APPROVE,
          MemoryAction.REJECT)) {
        control(routes, base, action);
      }
      routes.get(base + "/{memory_id}/provenance", Requires.scope(Scope.MEMORY_CONTROL), ctx -> {
        Principal caller = Access.caller(ctx);
        AgentScope scope = scope(ctx, caller);
        MemoryReads.Provenance provenance =
            reads.provenance(caller, scope, ctx.pathParam("memory_id"));
        Map<String, Object> view = MemoryViews.provenance(provenance);
        view.putAll(notes.about(caller.orgId(), provenance.memory().id(), scope));
        Responses.json(ctx, view);
      });
      routes.get(base + "/{memory_id}", Requires.scope(Scope.MEMORY_READ), ctx -> {
        Principal caller = Access.caller(ctx);
        Responses.json(
            ctx,
            MemoryViews.memory(reads.get(caller, scope(ctx, caller), ctx.pathParam("memory_id"))));
      });
      routes.patch(base + "/{memory_id}", Requires.scope(Scope.MEMORY_WRITE), ctx -> {
        Principal caller = Access.caller(ctx);
        AgentScope scope = scope(ctx, caller);
        MemoryEdit edit = MemoryEdit.parse(JsonBody.parseMergePatch(ctx, maxBodyBytes));
        Responses.json(
            ctx,
            MemoryViews.memory(control.edit(
                caller, scope, ctx.pathParam("memory_id"), edit, HttpServer.requestId(ctx))));
      });
      routes.delete(base + "/{memory_id}", Requires.scope(Scope.MEMORY_DELETE), ctx -> {
        Principal caller = Access.caller(ctx);
        AgentScope scope = scope(ctx, caller);
        Responses.json(
            ctx,
            MemoryViews.memory(control.act(
                caller,
                scope,
                ctx.pathParam("memory_id"),
                MemoryAction.DELETE,
                control(ctx),
                HttpServer.requestId(ctx))));
      });
    }
  }

  private void control(Routes routes, String base, MemoryAction action) {
    routes.post(base + "/{memory_id}/" + action.id(), Requires.scope(Scope.MEMORY_CONTROL), ctx -> {
      Principal caller = Access.caller(ctx);
      AgentScope boundary = scope(ctx, caller);
      MemoryControl.Control why = control(ctx);
      Responses.json(
          ctx,
          MemoryViews.memory(control.act(
              caller,
              boundary,
              ctx.pathParam("memory_id"),
              action,
              why,
              HttpServer.requestId(ctx))));
    });
  }

  private void retrieve(Context ctx) {
    Principal caller = Access.caller(ctx);
    JsonBody json = JsonBody.parse(ctx, maxBodyBytes);
    AgentScope scope = EndUsers.withBody(scope(ctx, caller), caller, json);
    RetrievalRequest request = RetrievalRequest.parse(json, clock.instant());
    long started = System.nanoTime();
    MemoryReads.Retrieval retrieval =
        reads.retrieve(caller, scope, request, HttpServer.requestId(ctx));
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("object", "memory.retrieval");
    body.put("query", request.query());
    body.put("agent", scope.agent());
    body.put("userId", scope.user());
    body.put("asOf", request.asOf() == null ? null : request.asOf().toString());
    body.put("mode", request.mode().id());
    body.put("memories", retrieval.results().stream().map(MemoryViews::ranked).toList());
    if (request.includeContext()) {
      body.put("context", context(request, retrieval, started));
    }
    Responses.json(ctx, body);
  }

  private static Map<String, Object> context(
      RetrievalRequest request, MemoryReads.Retrieval retrieval, long started) {
    ContextBlock.Assembled block = ContextBlock.assemble(
        retrieval.results().stream().map(ActivationRanker.Ranked::memory).toList(),
        request.contextMode(),
        request.maxContextTokens());
    Map<String, Object> statistics = new LinkedHashMap<>();
    statistics.put("lexicalCandidates", retrieval.lexicalCandidates());
    statistics.put("vectorCandidates", retrieval.vectorCandidates());
    statistics.put("candidates", retrieval.candidates());
    statistics.put("returned", retrieval.results().size());
    statistics.put("included", block.included());
    statistics.put("omitted", block.omitted());
    statistics.put("embedMs", retrieval.embedMicros() / 1000.0);
    statistics.put("searchMs", retrieval.searchMicros() / 1000.0);
    statistics.put("rankMs", retrieval.rankMicros() / 1000.0);
    statistics.put("tookMs", (System.nanoTime() - started) / 1_000_000.0);
    Map<String, Object> context = new LinkedHashMap<>();
    context.put("mode", request.contextMode().id());
    context.put("systemBlock", block.systemBlock());
    context.put("tokens", block.tokens());
    context.put("tokenBudget", request.maxContextTokens());
    context.put("memoryIds", block.includedIds());
    context.put("statistics", statistics);
    return context;
  }

  private void encode(Context ctx) {
    Principal caller = Access.caller(ctx);
    String key = MemoryWrites.idempotencyKey(ctx.header("Idempotency-Key"));
    JsonBody json = JsonBody.parse(ctx, maxBodyBytes);
    AgentScope scope = EndUsers.withBody(scope(ctx, caller), caller, json);
    MemoryInput input = MemoryInput.parse(json, clock.instant());
    MemoryWrites.Encoded encoded =
        writes.encode(caller, scope, input, key, HttpServer.requestId(ctx));
    if (encoded.replayed()) {
      ctx.header("Idempotent-Replayed", "true");
    }
    // A memory that already said this was reinforced, not created.
    ctx.status(encoded.deduplicated() ? 200 : 201)
        .contentType("application/json")
        .result(encoded.responseJson());
  }

  private void ingest(Context ctx) {
    Principal caller = Access.caller(ctx);
    JsonBody body = JsonBody.parse(ctx, maxBodyBytes)
        .allowOnly(Set.of(
            "type",
            "source",
            "subject",
            "text",
            "metadata",
            EndUsers.USER_FIELD,
            EndUsers.SESSION_FIELD));
    AgentScope scope = EndUsers.withBody(scope(ctx, caller), caller, body);
    String type = body.requiredString("type", 128);
    if (!EVENT_TYPE.matcher(type).matches()) {
      throw ApiException.badRequest(
          "type",
          "'type' must be 1-128 characters of letters, digits and _ . : / -, "
              + "such as 'customer.plan_changed'");
    }
    MemoryEvents.EventInput input = new MemoryEvents.EventInput(
        type,
        body.requiredString("source", 128),
        body.optionalString("subject", MemoryInput.MAX_SUBJECT).orElse(null),
        body.requiredString("text", MemoryInput.MAX_TEXT),
        MemoryInput.metadataObject(body),
        EndUsers.session(body));
    MemoryEvents.Ingested ingested = events.ingest(caller, scope, input, HttpServer.requestId(ctx));
    Map<String, Object> response = new LinkedHashMap<>();
    response.put("event", MemoryViews.event(ingested.event()));
    response.put(
        "candidates", ingested.candidates().stream().map(MemoryViews::memory).toList());
    Responses.json(ctx, 201, response);
  }

  private void events(Context ctx) {
    Principal caller = Access.caller(ctx);
    AgentScope scope = scope(ctx, caller);
    int limit = QueryParams.integer(ctx, "limit", 50, 1, MAX_PAGE);
    List<BusinessEvent> page = events.events(
        caller,
        scope,
        ctx.queryParam("type"),
        ctx.queryParam("source"),
        ctx.queryParam("before"),
        limit);
    Responses.json(
        ctx,
        list(
            page.stream().map(MemoryViews::event).toList(),
            "nextBefore",
            page.size() == limit ? page.getLast().id() : null));
  }

  private void event(Context ctx) {
    Principal caller = Access.caller(ctx);
    Responses.json(
        ctx,
        MemoryViews.event(events.event(caller, scope(ctx, caller), ctx.pathParam("event_id"))));
  }

  /**
   * Finds what is worth remembering in a conversation and writes it ({@code dryRun}: only says
   * what it would write). The body is {@code {messages: [{role, content}], dryRun?}}, the shape a
   * chat's messages already have.
   */
  private void extract(Context ctx) {
    Principal caller = Access.caller(ctx);
    JsonBody body = JsonBody.parse(ctx, maxBodyBytes);
    body.allowOnly(Set.of("messages", "dryRun", EndUsers.USER_FIELD, EndUsers.SESSION_FIELD));
    AgentScope scope = EndUsers.withBody(scope(ctx, caller), caller, body);
    JsonNode messages = body.get("messages");
    if (messages == null || !messages.isArray() || messages.isEmpty() || messages.size() > 500) {
      throw ApiException.badRequest(
          "messages", "'messages' must be a non-empty array of at most 500 {role, content}");
    }
    List<String> roles = new ArrayList<>();
    List<String> contents = new ArrayList<>();
    for (int i = 0; i < messages.size(); i++) {
      JsonNode message = messages.get(i);
      if (!message.path("role").isTextual()
          || !message.path("content").isTextual()
          || message.path("content").asText().length() > MemoryInput.MAX_TEXT * 4) {
        throw ApiException.badRequest(
            "messages[" + i + "]",
            "messages[" + i + "] must have a string role and a string content of at most "
                + MemoryInput.MAX_TEXT * 4 + " characters");
      }
      roles.add(message.get("role").asText());
      contents.add(message.get("content").asText());
    }
    boolean dryRun = body.optionalBoolean("dryRun").orElse(false);
    MemoryWrites.Extraction extraction = writes.extract(
        caller, scope, roles, contents, EndUsers.session(body), dryRun, HttpServer.requestId(ctx));
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("object", "memory.extraction");
    view.put("agent", scope.agent());
    view.put("userId", scope.user());
    view.put("dryRun", dryRun);
    view.put(
        "proposals", extraction.proposals().stream().map(MemoryRoutes::proposal).toList());
    view.put("memories", extraction.written().stream().map(MemoryViews::memory).toList());
    view.put("known", extraction.known().stream().map(MemoryRoutes::proposal).toList());
    Responses.json(ctx, dryRun ? 200 : 201, view);
  }

  private static Map<String, Object> proposal(ConversationExtractor.Proposal proposal) {
    return Map.of(
        "text", proposal.text(), "memoryKind", proposal.kind().id(), "message", proposal.message());
  }

  /**
   * The boundary's memories, newest first: {@code state} (comma-separated; default durable),
   * {@code memoryKind}, {@code subject}, when it occurred ({@code occurredAfter} inclusive,
   * {@code occurredBefore} exclusive), {@code sessionId}, {@code limit} and the {@code before}
   * cursor; the end user ({@code userId}) is the boundary's.
   */
  private void list(Context ctx) {
    Principal caller = Access.caller(ctx);
    AgentScope scope = scope(ctx, caller);
    int limit = QueryParams.integer(ctx, "limit", 50, 1, MAX_PAGE);
    List<MemoryState> states = states(ctx, "durable");
    MemoryStore.Filter filter = filter(ctx, states);
    List<MemoryRecord> page = reads.list(caller, scope, filter, ctx.queryParam("before"), limit);
    Responses.json(
        ctx,
        list(
            page.stream().map(MemoryViews::memory).toList(),
            "nextBefore",
            page.size() == limit ? page.getLast().id() : null));
  }

  /**
   * What a list or an export keeps besides states: {@code memoryKind}, {@code subject}, when it
   * occurred ({@code occurredAfter} inclusive, {@code occurredBefore} exclusive), {@code
   * sessionId} and metadata {@code filters}.
   */
  public static MemoryStore.Filter filter(Context ctx, List<MemoryState> states) {
    String kind = ctx.queryParam("memoryKind");
    Instant from = QueryParams.instant(ctx, "occurredAfter");
    Instant until = QueryParams.instant(ctx, "occurredBefore");
    if (from != null && until != null && !from.isBefore(until)) {
      throw ApiException.badRequest(
          "occurredAfter", "'occurredAfter' must be earlier than 'occurredBefore'");
    }
    return new MemoryStore.Filter(
        states,
        kind == null ? null : MemoryInput.kind(kind),
        ctx.queryParam("subject"),
        from,
        until,
        EndUsers.session(ctx.queryParam(EndUsers.SESSION_FIELD), EndUsers.SESSION_FIELD),
        listFilters(ctx));
  }

  /** {@code state}: one or more states, comma-separated ({@code fallback} when absent). */
  public static List<MemoryState> states(Context ctx, String fallback) {
    List<MemoryState> states = new ArrayList<>();
    for (String id :
        Objects.requireNonNullElse(ctx.queryParam("state"), fallback).split(",")) {
      states.add(MemoryState.fromId(id.strip())
          .orElseThrow(() -> ApiException.badRequest(
              "state",
              "'state' is one or more of candidate, durable, suppressed, tombstoned, "
                  + "comma-separated")));
    }
    return states;
  }

  /** {@code filters}: the metadata conditions of a list, as a JSON object in the query string. */
  private static MetadataFilters listFilters(Context ctx) {
    String filters = ctx.queryParam(MetadataFilters.FIELD);
    if (filters == null || filters.isEmpty()) {
      return MetadataFilters.NONE;
    }
    JsonNode parsed;
    try {
      parsed = io.engram.platform.json.Json.MAPPER.readTree(filters);
    } catch (java.io.IOException e) {
      throw ApiException.badRequest(
          MetadataFilters.FIELD, "'filters' must be a JSON object, such as {\"team\":\"sales\"}");
    }
    return MetadataFilters.parse(parsed);
  }

  private void candidates(Context ctx) {
    Principal caller = Access.caller(ctx);
    AgentScope scope = scope(ctx, caller);
    int limit = QueryParams.integer(ctx, "limit", 50, 1, MAX_PAGE);
    List<MemoryRecord> page = reads.candidates(caller, scope, ctx.queryParam("after"), limit);
    Responses.json(
        ctx,
        list(
            page.stream().map(MemoryViews::memory).toList(),
            "nextAfter",
            page.size() == limit ? page.getLast().id() : null));
  }

  private static Map<String, Object> list(List<?> data, String cursorName, String cursor) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("object", "list");
    body.put("data", data);
    body.put(cursorName, cursor);
    return body;
  }

  public static AgentScope scope(Context ctx, Principal caller) {
    return AgentBoundary.of(ctx, caller, "agent_slug", "/v1/memory/agents/{agent_slug}/...");
  }

  /** The optional control body {reason, actor}; a request without a body is fine. */
  private MemoryControl.Control control(Context ctx) {
    if (ctx.req().getContentLengthLong() == 0
        || (ctx.req().getContentLengthLong() < 0 && ctx.contentType() == null)) {
      return MemoryControl.Control.NONE;
    }
    JsonBody body = JsonBody.parse(ctx, maxBodyBytes).allowOnly(Set.of("reason", "actor"));
    return new MemoryControl.Control(
        body.optionalString("reason", 1_000).orElse(null),
        body.optionalString("actor", 200).orElse(null));
  }
}
