package io.engram.actions;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.access.Principal;
import io.engram.access.Scope;
import io.engram.capabilities.CapabilityHandler;
import io.engram.memory.AgentScope;
import io.engram.memory.MemoryInput;
import io.engram.memory.MemoryModule;
import io.engram.memory.MemoryViews;
import io.engram.memory.MemoryWrites;
import io.engram.memory.Recall;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import io.engram.platform.json.Json;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

/**
 * The built-in handlers of what Engram itself holds, in the organization's memory: knowledge
 * search ({@code search_org_knowledge}: recall, each memory's ranking explanation as its
 * citation), and preferences, decisions and meeting notes written as memories with their
 * provenance (the capability, assistant and tool call in the memory's metadata, the credential and
 * request in its change log). Each stays inside the conversation's agent boundary.
 *
 * <p>The registry is loaded before memory opens (the admin command loads it without memory), so
 * the handlers reach memory through {@link #bind}, called once memory is open.
 */
public final class MemoryHandlers {
  private final AtomicReference<MemoryModule> memory = new AtomicReference<>();

  /** The handlers, executable once {@link #bind} has run. */
  public List<CapabilityHandler> handlers() {
    return List.of(
        handler("search_org_knowledge", this::search),
        handler(
            "remember_preferences",
            call -> write(
                call,
                "remember_preferences",
                call.arguments().path("preference").asText(),
                "preference",
                call.arguments().path("subject").asText(null),
                Json.MAPPER.createObjectNode())),
        handler("track_team_decisions", call -> {
          JsonNode args = call.arguments();
          String rationale = args.path("rationale").asText("");
          ObjectNode extra = Json.MAPPER.createObjectNode().put("decision", true);
          if (args.hasNonNull("team")) {
            extra.put("team", args.get("team").asText());
          }
          return write(
              call,
              "track_team_decisions",
              args.path("decision").asText() + (rationale.isEmpty() ? "" : " Why: " + rationale),
              "event",
              args.path("team").asText(null),
              extra);
        }),
        handler("take_meeting_notes", call -> {
          JsonNode args = call.arguments();
          ObjectNode extra =
              Json.MAPPER.createObjectNode().put("meeting", args.path("title").asText());
          extra.set(
              "actionItems",
              args.path("action_items").isArray()
                  ? args.get("action_items")
                  : Json.MAPPER.createArrayNode());
          return write(
              call,
              "take_meeting_notes",
              "Meeting " + args.path("title").asText() + ": "
                  + args.path("notes").asText(),
              "event",
              null,
              extra);
        }));
  }

  public void bind(MemoryModule service) {
    memory.set(service);
  }

  private MemoryModule memory() {
    MemoryModule service = memory.get();
    if (service == null) {
      throw new IllegalStateException("memory is not open: built-in handlers cannot run");
    }
    return service;
  }

  private JsonNode search(CapabilityHandler.Invocation call) {
    Principal caller = call.caller();
    // A token searches the organization's knowledge with knowledge:read (or memory:read), as on
    // POST /v1/memory/retrieve; keys and sessions act for the organization.
    if (caller.kind() == Principal.Kind.CONTEXT_TOKEN
        && !caller.hasScope(Scope.MEMORY_READ)
        && !caller.hasScope(Scope.KNOWLEDGE_READ)) {
      throw ApiException.forbidden(
          "insufficient_scope",
          "Searching the organization's knowledge needs the scope knowledge:read or memory:read");
    }
    int limit =
        call.arguments().path("limit").asInt(call.config().path("maxResults").asInt(10));
    return Json.MAPPER.valueToTree(Recall.of(
        memory().reads(),
        call.caller(),
        new AgentScope(call.agent()),
        call.arguments().path("query").asText(),
        limit,
        call.requestId()));
  }

  /** Writes one memory with its provenance; the memory as stored is the result. */
  private JsonNode write(
      CapabilityHandler.Invocation call,
      String capabilityId,
      String text,
      String kind,
      String subject,
      ObjectNode metadata) {
    metadata
        .put("capability", capabilityId)
        .put("assistantId", call.assistantId())
        .put("toolCallId", call.toolCallId());
    ObjectNode input = Json.MAPPER
        .createObjectNode()
        .put("text", clip(text, MemoryInput.MAX_TEXT))
        .put("memoryKind", kind);
    if (subject != null && !subject.isBlank()) {
      input.put("subject", clip(subject, MemoryInput.MAX_SUBJECT));
    }
    input.set("metadata", metadata);
    MemoryWrites.Encoded encoded = memory()
        .writes()
        .encode(
            call.caller(),
            new AgentScope(call.agent()),
            MemoryInput.parse(JsonBody.received(input), call.at()),
            null,
            call.requestId());
    return Json.MAPPER.valueToTree(MemoryViews.memory(encoded.memory()));
  }

  private static String clip(String text, int max) {
    return text.length() > max ? text.substring(0, max) : text;
  }

  static CapabilityHandler handler(
      String id, Function<CapabilityHandler.Invocation, JsonNode> run) {
    return new CapabilityHandler() {
      @Override
      public String capabilityId() {
        return id;
      }

      @Override
      public JsonNode execute(Invocation invocation) {
        return run.apply(invocation);
      }
    };
  }
}
