package io.engram.memory;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.access.Principal;
import io.engram.access.Scope;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import io.engram.platform.json.Json;
import java.time.Clock;
import java.util.List;
import java.util.Map;

/**
 * The memory tools an MCP client sees: {@code remember}, {@code recall}, {@code forget} and
 * {@code list_memories}, each bounded by the token's scopes (a tool it may not use is not listed,
 * and refused if called) and by its agents (an {@code agent} argument names the boundary, as the
 * REST routes' path does). Arguments are checked by the same rules as the REST bodies.
 */
final class McpTools {
  /**
   * A tool as {@code tools/list} shows it: its scope, what it does, its arguments' schema (with the
   * values each may take), the schema of its structured result, and MCP's hints to the client
   * (read-only, destructive, idempotent; none reaches outside Engram).
   */
  private record Tool(
      String name,
      String title,
      Scope scope,
      String description,
      String inputSchema,
      String outputSchema,
      boolean readOnly,
      boolean destructive,
      boolean idempotent) {}

  private static final String AGENT = "\"agent\":{\"type\":\"string\",\"description\":"
      + "\"The agent boundary (a slug); left out: the organization level, or the token's own agent "
      + "when it is bound to one\"}";

  private static final String USER = ",\"userId\":{\"type\":\"string\",\"maxLength\":256,"
      + "\"description\":\"The end user of the app the call is for: their memories and the shared"
      + " ones; left out: the shared memories, or the token's own end user when it is bound to"
      + " one\"}";

  private static final String SESSION = ",\"sessionId\":{\"type\":\"string\",\"maxLength\":256,"
      + "\"description\":\"The session or thread the memory comes from\"}";

  /** A memory as the tools return it (docs/memory.md defines each field). */
  private static final String MEMORY =
      "{\"type\":\"object\",\"required\":[\"id\",\"text\",\"state\"],"
          + "\"properties\":{\"id\":{\"type\":\"string\"},\"text\":{\"type\":\"string\"},"
          + "\"subject\":{\"type\":[\"string\",\"null\"]},\"memoryKind\":{\"type\":\"string\"},"
          + "\"state\":{\"enum\":[\"candidate\",\"durable\",\"suppressed\",\"tombstoned\"]},"
          + "\"agent\":{\"type\":[\"string\",\"null\"]},\"userId\":{\"type\":[\"string\",\"null\"]},"
          + "\"sessionId\":{\"type\":[\"string\",\"null\"]},\"deduplicated\":{\"type\":\"boolean\"}}}";

  private static final String MEMORIES =
      "\"memories\":{\"type\":\"array\",\"items\":" + MEMORY + "}";

  private static final List<Tool> TOOLS = List.of(
      new Tool(
          "remember",
          "Remember",
          Scope.MEMORY_WRITE,
          "Remember something for the organization (or inside an agent): a fact, preference, "
              + "decision or event, in one or two sentences. What a memory already says is "
              + "reinforced, not written twice.",
          "{\"type\":\"object\",\"required\":[\"text\"],\"properties\":{"
              + "\"text\":{\"type\":\"string\",\"maxLength\":8000},"
              + "\"subject\":{\"type\":\"string\",\"maxLength\":200},"
              + "\"memoryKind\":{\"enum\":" + kinds() + "},"
              + "\"confidence\":{\"type\":\"number\",\"minimum\":0,\"maximum\":1}," + AGENT + USER
              + SESSION + "}}",
          MEMORY,
          false,
          false,
          false),
      new Tool(
          "recall",
          "Recall",
          Scope.MEMORY_READ,
          "Recall what the organization remembers about a question: the memories ranked by "
              + "relevance and activation, and a ready context block for a prompt.",
          "{\"type\":\"object\",\"required\":[\"query\"],\"properties\":{"
              + "\"query\":{\"type\":\"string\",\"maxLength\":2000},"
              + "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":50}," + AGENT + USER
              + "}}",
          "{\"type\":\"object\",\"required\":[\"memories\",\"context\"],\"properties\":{" + MEMORIES
              + ",\"context\":{\"type\":\"string\"}}}",
          true,
          false,
          true),
      new Tool(
          "forget",
          "Forget",
          Scope.MEMORY_DELETE,
          "Forget a memory by its id: it is never recalled again (kept for provenance).",
          "{\"type\":\"object\",\"required\":[\"id\"],\"properties\":{"
              + "\"id\":{\"type\":\"string\"},\"reason\":{\"type\":\"string\"}," + AGENT + USER
              + "}}",
          MEMORY,
          false,
          true,
          true),
      new Tool(
          "list_memories",
          "List memories",
          Scope.MEMORY_READ,
          "List the most recent memories, newest first.",
          "{\"type\":\"object\",\"properties\":{"
              + "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100},"
              + "\"before\":{\"type\":\"string\"}," + AGENT + USER + SESSION + "}}",
          "{\"type\":\"object\",\"required\":[\"memories\"],\"properties\":{" + MEMORIES + "}}",
          true,
          false,
          true));

  /** The memory kinds, as a JSON array of their ids. */
  private static String kinds() {
    return Json.write(
        java.util.Arrays.stream(MemoryKind.values()).map(MemoryKind::id).toList());
  }

  private final MemoryReads reads;
  private final MemoryWrites writes;
  private final MemoryControl control;
  private final Clock clock;

  McpTools(MemoryReads reads, MemoryWrites writes, MemoryControl control, Clock clock) {
    this.reads = reads;
    this.writes = writes;
    this.control = control;
    this.clock = clock;
  }

  /** The tools this caller may use, in MCP's {@code tools/list} form. */
  ArrayNode list(Principal caller) {
    ArrayNode tools = Json.MAPPER.createArrayNode();
    for (Tool tool : TOOLS) {
      if (caller.hasScope(tool.scope())) {
        ObjectNode listed = tools
            .addObject()
            .put("name", tool.name())
            .put("title", tool.title())
            .put("description", tool.description());
        listed.set("inputSchema", Json.read(tool.inputSchema(), JsonNode.class));
        listed.set("outputSchema", Json.read(tool.outputSchema(), JsonNode.class));
        listed
            .putObject("annotations")
            .put("title", tool.title())
            .put("readOnlyHint", tool.readOnly())
            .put("destructiveHint", tool.destructive())
            .put("idempotentHint", tool.idempotent())
            .put("openWorldHint", false);
      }
    }
    return tools;
  }

  /**
   * Runs a tool: its result as MCP content (text) and structured content. A refusal (bad
   * arguments, a scope the token lacks, a memory that is not there) is an ApiException, which the
   * caller turns into a tool error the model can read.
   */
  ObjectNode call(Principal caller, String name, ObjectNode arguments, String requestId) {
    Tool tool = TOOLS.stream()
        .filter(t -> t.name().equals(name))
        .findFirst()
        .orElseThrow(() -> ApiException.badRequest("name", "Unknown tool '" + name + "'"));
    if (!caller.hasScope(tool.scope())) {
      throw ApiException.forbidden(
          "insufficient_scope",
          "The tool " + name + " needs the scope " + tool.scope().wireName());
    }
    AgentScope scope = endUser(caller, agent(caller, arguments), arguments);
    JsonBody body = JsonBody.received(arguments);
    Object structured = switch (name) {
      case "remember" -> {
        MemoryWrites.Encoded encoded =
            writes.encode(caller, scope, MemoryInput.parse(body, clock.instant()), null, requestId);
        java.util.Map<String, Object> view =
            new java.util.LinkedHashMap<>(MemoryViews.memory(encoded.memory()));
        if (encoded.deduplicated()) {
          view.put("deduplicated", true);
        }
        yield view;
      }
      case "recall" -> recall(caller, scope, body, requestId);
      case "forget" -> {
        body.allowOnly(java.util.Set.of("id", "reason"));
        yield MemoryViews.memory(control.act(
            caller,
            scope,
            body.requiredString("id", 64),
            MemoryAction.DELETE,
            new MemoryControl.Control(body.optionalString("reason", 1000).orElse(null), "mcp"),
            requestId));
      }
      default -> {
        body.allowOnly(java.util.Set.of("limit", "before", EndUsers.SESSION_FIELD));
        List<MemoryRecord> page = reads.list(
            caller,
            scope,
            new MemoryStore.Filter(
                List.of(MemoryState.DURABLE),
                null,
                null,
                null,
                null,
                EndUsers.session(body),
                MetadataFilters.NONE),
            body.optionalString("before", 64).orElse(null),
            body.optionalInt("limit", 1, 100).orElse(20));
        yield Map.of("memories", page.stream().map(MemoryViews::memory).toList());
      }
    };
    ObjectNode result = Json.MAPPER.createObjectNode();
    String text = structured instanceof Map<?, ?> map && map.containsKey("context")
        ? String.valueOf(map.get("context"))
        : Json.write(structured);
    result.putArray("content").addObject().put("type", "text").put("text", text);
    result.set("structuredContent", Json.MAPPER.valueToTree(structured));
    result.put("isError", false);
    return result;
  }

  private Map<String, Object> recall(
      Principal caller, AgentScope scope, JsonBody body, String requestId) {
    body.allowOnly(java.util.Set.of("query", "limit"));
    return Recall.of(
        reads,
        caller,
        scope,
        body.requiredString("query", 2000),
        body.optionalInt("limit", 1, 50).orElse(8),
        requestId);
  }

  /**
   * The boundary narrowed to the end user the {@code userId} argument names (taken out of the
   * arguments); left out by a token bound to one end user, that user.
   */
  private static AgentScope endUser(Principal caller, AgentScope scope, ObjectNode arguments) {
    JsonNode user = arguments.remove(EndUsers.USER_FIELD);
    if (user != null && !user.isTextual()) {
      throw ApiException.badRequest(EndUsers.USER_FIELD, "'userId' must be a string");
    }
    return EndUsers.withNamed(
        scope, caller, user == null ? null : user.asText(), EndUsers.USER_FIELD);
  }

  /**
   * The boundary the {@code agent} argument names (taken out of the arguments), as on REST; left
   * out by a token bound to one agent, that agent (a model need not repeat it in every call).
   */
  private static AgentScope agent(Principal caller, ObjectNode arguments) {
    JsonNode agent = arguments.remove("agent");
    if (agent != null && !agent.isTextual()) {
      throw ApiException.badRequest("agent", "'agent' must be an agent slug");
    }
    String named = agent == null ? null : agent.asText();
    if (named == null && caller.agents() != null && caller.agents().size() == 1) {
      named = caller.agents().getFirst();
    }
    return AgentBoundary.resolve(named, caller, "name it in the tool's 'agent' argument");
  }
}
