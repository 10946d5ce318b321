package io.engram.memory;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.access.Access;
import io.engram.access.Principal;
import io.engram.access.Requires;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.HttpServer;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.engram.platform.json.Json;
import io.javalin.http.Context;
import java.util.List;
import java.util.Set;

/**
 * The organization's memory as a Model Context Protocol server, over the Streamable HTTP
 * transport at {@code /mcp}: JSON-RPC requests POSTed one at a time and answered as JSON (the
 * transport lets a server answer without a stream), stateless (no session id: every request
 * carries its token). Tools: remember, recall, forget, list_memories; resource: the recent
 * memories. Authenticated by a context access token, bounded by its scopes and agents.
 */
public final class McpRoutes implements RouteModule {
  static final List<String> PROTOCOL_VERSIONS = List.of("2025-06-18", "2025-03-26");
  private static final String RECENT = "memory://recent";

  private final McpTools tools;
  private final MemoryReads reads;
  private final long maxBodyBytes;
  private final List<String> allowedOrigins;

  McpRoutes(McpTools tools, MemoryReads reads, long maxBodyBytes, List<String> allowedOrigins) {
    this.tools = tools;
    this.reads = reads;
    this.maxBodyBytes = maxBodyBytes;
    this.allowedOrigins = allowedOrigins;
  }

  @Override
  public void register(Routes routes) {
    // Only POST: a GET (a server-initiated stream) or DELETE (ending a session) is the 405 the
    // transport expects from a server that opens no stream and keeps no session.
    routes.post("/mcp", Requires.contextToken(), this::post);
  }

  private void post(Context ctx) {
    requireAllowedOrigin(ctx);
    String version = ctx.header("MCP-Protocol-Version");
    if (version != null && !PROTOCOL_VERSIONS.contains(version)) {
      throw ApiException.badRequest(
          "MCP-Protocol-Version", "Unsupported MCP protocol version " + version);
    }
    Principal caller = Access.caller(ctx);
    ObjectNode request = JsonBody.parseObject(ctx, maxBodyBytes);
    if (!request.has("id") || request.get("id").isNull()) {
      ctx.status(202); // a notification (initialized, cancelled): nothing to answer
      return;
    }
    ObjectNode response = Json.MAPPER.createObjectNode().put("jsonrpc", "2.0");
    response.set("id", request.get("id"));
    try {
      response.set("result", answer(caller, request, HttpServer.requestId(ctx)));
    } catch (RpcError e) {
      response.putObject("error").put("code", e.code).put("message", e.getMessage());
    }
    ctx.contentType("application/json");
    ctx.result(Json.write(response));
  }

  /**
   * A browser page on another site could otherwise drive a local server (DNS rebinding): a request
   * with an Origin must come from an origin CORS_ORIGINS names. The wildcard does not count here,
   * so the default configuration accepts MCP from non-browser clients only.
   */
  private void requireAllowedOrigin(Context ctx) {
    String origin = ctx.header("Origin");
    if (origin != null && !allowedOrigins.contains(origin)) {
      throw ApiException.forbidden("origin_not_allowed", "Origin " + origin + " is not allowed");
    }
  }

  private JsonNode answer(Principal caller, ObjectNode request, String requestId) {
    if (!"2.0".equals(request.path("jsonrpc").asText())) {
      throw new RpcError(-32600, "Not a JSON-RPC 2.0 request");
    }
    JsonNode params = request.path("params");
    return switch (request.path("method").asText("")) {
      case "initialize" -> initialize(params);
      case "ping" -> Json.MAPPER.createObjectNode();
      case "tools/list" -> Json.MAPPER.createObjectNode().set("tools", tools.list(caller));
      case "tools/call" -> call(caller, params, requestId);
      case "resources/list" -> resources();
      case "resources/read" -> read(caller, params);
      default -> throw new RpcError(-32601, "Method not found: " + request.path("method"));
    };
  }

  private static JsonNode initialize(JsonNode params) {
    String asked = params.path("protocolVersion").asText("");
    ObjectNode result = Json.MAPPER
        .createObjectNode()
        .put(
            "protocolVersion",
            PROTOCOL_VERSIONS.contains(asked) ? asked : PROTOCOL_VERSIONS.getFirst());
    ObjectNode capabilities = result.putObject("capabilities");
    capabilities.putObject("tools").put("listChanged", false);
    capabilities.putObject("resources").put("listChanged", false).put("subscribe", false);
    result.putObject("serverInfo").put("name", "engram-memory").put("version", "0.1.0");
    result.put(
        "instructions",
        "The organization's memory: recall before answering, remember what is worth keeping.");
    return result;
  }

  private JsonNode call(Principal caller, JsonNode params, String requestId) {
    String name = params.path("name").asText("");
    JsonNode arguments = params.path("arguments");
    if (!arguments.isMissingNode() && !arguments.isObject()) {
      throw new RpcError(-32602, "'arguments' must be an object");
    }
    if (Set.of("remember", "recall", "forget", "list_memories").stream().noneMatch(name::equals)) {
      throw new RpcError(-32602, "Unknown tool: " + name);
    }
    try {
      return tools.call(
          caller,
          name,
          arguments.isObject()
              ? ((ObjectNode) arguments).deepCopy()
              : Json.MAPPER.createObjectNode(),
          requestId);
    } catch (ApiException e) {
      // A refused call is the tool's answer, so the model can read why and try again.
      ObjectNode result = Json.MAPPER.createObjectNode().put("isError", true);
      result.putArray("content").addObject().put("type", "text").put("text", e.getMessage());
      return result;
    }
  }

  private static JsonNode resources() {
    ObjectNode result = Json.MAPPER.createObjectNode();
    result
        .putArray("resources")
        .addObject()
        .put("uri", RECENT)
        .put("name", "Recent memories")
        .put("description", "The organization's 20 most recent memories, newest first")
        .put("mimeType", "application/json");
    return result;
  }

  private JsonNode read(Principal caller, JsonNode params) {
    if (!RECENT.equals(params.path("uri").asText())) {
      throw new RpcError(-32002, "Resource not found: " + params.path("uri").asText());
    }
    if (!caller.hasScope(io.engram.access.Scope.MEMORY_READ)) {
      throw new RpcError(-32603, "Reading memories needs the scope memory:read");
    }
    List<MemoryRecord> recent = reads.list(
        caller,
        AgentBoundary.resolve(null, caller, "use the list_memories tool with 'agent'"),
        new MemoryStore.Filter(List.of(MemoryState.DURABLE), null, null),
        null,
        20);
    ObjectNode result = Json.MAPPER.createObjectNode();
    result
        .putArray("contents")
        .addObject()
        .put("uri", RECENT)
        .put("mimeType", "application/json")
        .put("text", Json.write(recent.stream().map(MemoryViews::memory).toList()));
    return result;
  }

  /** A JSON-RPC error: answered in the response's {@code error}, with HTTP 200. */
  private static final class RpcError extends RuntimeException {
    final int code;

    RpcError(int code, String message) {
      super(message, null, false, false);
      this.code = code;
    }
  }
}
