package io.engram.memory;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.access.Principal;
import io.engram.platform.http.JsonBody;
import io.engram.platform.json.Json;
import java.util.Map;

/**
 * Recall as a tool gives it (MCP's {@code recall}, the {@code search_org_knowledge} capability):
 * the memories ranked for a query, each with why it ranked where it did (the citation), and the
 * ready context block.
 */
public final class Recall {
  private Recall() {}

  public static Map<String, Object> of(
      MemoryReads memory,
      Principal caller,
      AgentScope scope,
      String query,
      int limit,
      String requestId) {
    ObjectNode request = Json.MAPPER
        .createObjectNode()
        .put("query", query)
        .put("limit", limit)
        .put("includeContext", true);
    RetrievalRequest retrieval =
        RetrievalRequest.parse(JsonBody.received(request), java.time.Instant.now());
    MemoryReads.Retrieval found = memory.retrieve(caller, scope, retrieval, requestId);
    ContextBlock.Assembled block = ContextBlock.assemble(
        found.results().stream().map(ActivationRanker.Ranked::memory).toList(),
        retrieval.contextMode(),
        retrieval.maxContextTokens());
    return Map.of(
        "memories",
        found.results().stream().map(MemoryViews::ranked).toList(),
        "context",
        block.systemBlock());
  }
}
