package io.engram.inference.routing;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.platform.json.Json;
import java.time.Instant;
import java.util.List;

/**
 * A client-facing model id and where its requests go: one or more deployments (a provider and the
 * provider's own name for the model), in priority groups (lowest first; the next group is the
 * fallback when a group is exhausted), balanced within a group by {@code strategy}. {@code
 * retries} is how many more rounds over the deployments a request may make once every one was
 * tried (always before any byte reached the client). Prices are in US dollars per million tokens (null: not priced).
 */
public record RoutedModel(
    String id,
    String orgId,
    String model,
    Type type,
    int contextLength,
    Capabilities capabilities,
    Double inputPrice,
    Double outputPrice,
    Strategy strategy,
    int retries,
    List<Deployment> deployments,
    long createdAt,
    long updatedAt) {

  public enum Type {
    CHAT,
    EMBEDDING;

    public String wireName() {
      return name().toLowerCase();
    }
  }

  /** How a request picks among the deployments of one priority group. */
  public enum Strategy {
    /** At random, in proportion to the deployments' weights. */
    WEIGHTED,
    /** The deployment with the fewest requests in flight on this node (weights break ties). */
    LEAST_BUSY;

    public String wireName() {
      return name().toLowerCase();
    }
  }

  /** What the model can do, as its operator declares it; a request needing more is refused. */
  public record Capabilities(boolean tools, boolean jsonSchema, boolean vision) {}

  /** One place a model runs: a provider and its name for the model there. */
  public record Deployment(String id, String providerId, String model, int weight, int priority) {}

  public boolean isServers() {
    return orgId == null;
  }

  public ObjectNode view() {
    ObjectNode view = Json.MAPPER
        .createObjectNode()
        .put("id", model)
        .put("object", "model")
        .put("route_id", id)
        .put("type", type.wireName())
        .put("context_length", contextLength)
        .put("owned_by", isServers() ? "server" : "organization");
    view.putObject("capabilities")
        .put("tools", capabilities.tools())
        .put("json_schema", capabilities.jsonSchema())
        .put("vision", capabilities.vision());
    ObjectNode pricing = view.putObject("pricing");
    pricing.put("input_per_million", inputPrice);
    pricing.put("output_per_million", outputPrice);
    view.put("strategy", strategy.wireName()).put("retries", retries);
    var list = view.putArray("deployments");
    for (Deployment d : deployments) {
      list.addObject()
          .put("id", d.id())
          .put("provider_id", d.providerId())
          .put("model", d.model())
          .put("weight", d.weight())
          .put("priority", d.priority());
    }
    view.put("created_at", Instant.ofEpochMilli(createdAt).toString());
    view.put("updated_at", Instant.ofEpochMilli(updatedAt).toString());
    return view;
  }
}
