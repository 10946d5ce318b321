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
  private record Tool(String name, Scope scope, String description, String inputSchema) {}

  private static final String AGENT = "\"agent\":{\"type\":\"string\",\"description\":"
      + "\"The agent boundary (a slug); left out: the organization level\"}";
  private static final List<Tool> TOOLS = List.of(
      new Tool(
          "remember",
          Scope.MEMORY_WRITE,
          "Remember something for the organization (or inside an agent): a fact, preference, "
              + "decision or event, in one or two sentences.",
          "{\"type\":\"object\",\"required\":[\"text\"],\"properties\":{"
              + "\"text\":{\"type\":\"string\",\"maxLength\":8000},"
              + "\"subject\":{\"type\":\"string\",\"maxLength\":200},"
              + "\"memoryKind\":{\"type\":\"string\"},"
              + "\"confidence\":{\"type\":\"number\",\"minimum\":0,\"maximum\":1}," + AGENT + "}}"),
      new Tool(
          "recall",
          Scope.MEMORY_READ,
          "Recall what the organization remembers about a question: the memories ranked by "
              + "relevance and activation, and a ready context block for a prompt.",
          "{\"type\":\"object\",\"required\":[\"query\"],\"properties\":{"
              + "\"query\":{\"type\":\"string\",\"maxLength\":2000},"
              + "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":50}," + AGENT + "}}"),
      new Tool(
          "forget",
          Scope.MEMORY_DELETE,
          "Forget a memory by its id: it is never recalled again (kept for provenance).",
          "{\"type\":\"object\",\"required\":[\"id\"],\"properties\":{"
              + "\"id\":{\"type\":\"string\"},\"reason\":{\"type\":\"string\"}," + AGENT + "}}"),
      new Tool(
          "list_memories",
          Scope.MEMORY_READ,
          "List the most recent memories, newest first.",
          "{\"type\":\"object\",\"properties\":{"
              + "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100},"
              + "\"before\":{\"type\":\"string\"}," + AGENT + "}}"));

  private final MemoryService memory;
  private final Clock clock;

  McpTools(MemoryService memory, Clock clock) {
    this.memory = memory;
    this.clock = clock;
  }

  /** The tools this caller may use, in MCP's {@code tools/list} form. */
  ArrayNode list(Principal caller) {
    ArrayNode tools = Json.MAPPER.createArrayNode();
    for (Tool tool : TOOLS) {
      if (caller.hasScope(tool.scope())) {
        tools
            .addObject()
            .put("name", tool.name())
            .put("description", tool.description())
            .set("inputSchema", Json.read(tool.inputSchema(), JsonNode.class));
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
    AgentScope scope = agent(caller, arguments);
    JsonBody body = JsonBody.received(arguments);
    Object structured = switch (name) {
      case "remember" -> {
        MemoryService.Encoded encoded =
            memory.encode(caller, scope, MemoryInput.parse(body, clock.instant()), null, requestId);
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
        yield MemoryViews.memory(memory.act(
            caller,
            scope,
            body.requiredString("id", 64),
            MemoryAction.DELETE,
            new MemoryService.Control(body.optionalString("reason", 1000).orElse(null), "mcp"),
            requestId));
      }
      default -> {
        body.allowOnly(java.util.Set.of("limit", "before"));
        List<MemoryRecord> page = memory.list(
            caller,
            scope,
            new MemoryStore.Filter(List.of(MemoryState.DURABLE), null, null),
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
        memory,
        caller,
        scope,
        body.requiredString("query", 2000),
        body.optionalInt("limit", 1, 50).orElse(8),
        requestId);
  }

  /** The boundary the {@code agent} argument names (taken out of the arguments), as on REST. */
  private static AgentScope agent(Principal caller, ObjectNode arguments) {
    JsonNode agent = arguments.remove("agent");
    if (agent != null && !agent.isTextual()) {
      throw ApiException.badRequest("agent", "'agent' must be an agent slug");
    }
    return AgentBoundary.resolve(
        agent == null ? null : agent.asText(), caller, "name it in the tool's 'agent' argument");
  }
}
