package io.engram.capabilities;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.platform.json.Json;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Each capability's tool as a model is offered it: an OpenAI function tool named by the
 * capability id, its description, and a JSON Schema of its arguments built from the capability's
 * config, so what the config allows is what the schema offers ({@code create_orders}' order type
 * is an enum of its {@code allowedOrderTypes}, a refund's amount has its {@code maxRefundAmount}
 * as maximum). The executor checks the model's arguments against the same schema before any
 * effect ({@link ArgumentCheck}): the schema is the enforced contract, not a hint.
 *
 * <p>{@code answer_questions} has no tool: answering is the conversation itself.
 */
public final class ToolSchemas {
  private static final Map<String, Function<ObjectNode, ObjectNode>> PARAMETERS = Map.ofEntries(
      Map.entry(
          "search_org_knowledge",
          c -> object(
                  "query", text("What to look for in the organization's memory", 2000),
                  "limit",
                      integer("Most sources to cite", 1, c.path("maxResults").asInt(10)))
              .required("query")
              .build()),
      Map.entry(
          "access_org_analytics",
          c -> object("metrics", array(choice("A metric", c.get("allowedMetrics")), 1, 7))
              .build()),
      Map.entry(
          "summarize_org_updates",
          c -> object("since_days", integer("Days to look back over", 1, 90)).build()),
      Map.entry(
          "cite_policy_documents",
          c -> object(
                  "question", text("The policy question", 2000),
                  "collection", choice("The collection to cite from", c.get("allowedCollections")))
              .required("question", "collection")
              .build()),
      Map.entry(
          "track_team_decisions",
          c -> object(
                  "decision", text("The decision, as one sentence", 2000),
                  "rationale", text("Why it was decided", 2000),
                  "team", text("The team that decided", 200))
              .required("decision")
              .build()),
      Map.entry(
          "create_orders",
          c -> object(
                  "order_type", choice("The kind of order", c.get("allowedOrderTypes")),
                  "items", array(lineItem(), 1, 100),
                  "note", text("A note for whoever fulfils the order", 1000))
              .required("order_type", "items")
              .build()),
      Map.entry(
          "track_orders",
          c -> object("order_id", text("The order's id", 200))
              .required("order_id")
              .build()),
      Map.entry(
          "generate_quotes",
          c -> object(
                  "customer", text("Who the quote is for", 200),
                  "items", array(lineItem(), 1, 100),
                  "discount_percent",
                      number(
                          "Discount on the quote",
                          0,
                          c.path("maxDiscountPercent").asDouble(0)))
              .required("customer", "items")
              .build()),
      Map.entry(
          "manage_inventory",
          c -> object(
                  "action",
                      choice(
                          "What to do",
                          Json.MAPPER.valueToTree(
                              java.util.List.of("check_stock", "propose_restock"))),
                  "warehouse", choice("The warehouse", c.get("warehouses")),
                  "sku", text("The item", 200),
                  "quantity", integer("Units to restock", 1, 1_000_000))
              .required("action", "warehouse")
              .build()),
      Map.entry(
          "process_refunds",
          c -> object(
                  "order_id", text("The order refunded", 200),
                  "amount", number("The refund", 0.01, c.path("maxRefundAmount").asDouble()),
                  "reason", text("Why", 1000))
              .required("order_id", "amount")
              .build()),
      Map.entry(
          "draft_emails",
          c -> object(
                  "to", text("The recipient", 320),
                  "subject", text("The subject", 300),
                  "points", text("What the email must say", 5000),
                  "tone",
                      choice(
                          "The tone",
                          Json.MAPPER.valueToTree(
                              java.util.List.of("neutral", "formal", "friendly"))))
              .required("to", "subject", "points")
              .build()),
      Map.entry(
          "set_reminders",
          c -> object(
                  "text", text("What to be reminded of", 1000),
                  "due_at", dateTime("When (RFC 3339)"))
              .required("text", "due_at")
              .build()),
      Map.entry(
          "manage_tasks",
          c -> object(
                  "action",
                      choice(
                          "What to do",
                          Json.MAPPER.valueToTree(java.util.List.of("create", "complete", "list"))),
                  "title", text("The task, for create", 500),
                  "due_at", dateTime("When it is due, for create (RFC 3339)"),
                  "task_id", text("The task, for complete", 64))
              .required("action")
              .build()),
      Map.entry(
          "schedule_meetings",
          c -> object(
                  "title", text("The meeting's title", 300),
                  "attendees", array(text("An attendee's email", 320), 1, 50),
                  "start", dateTime("When it starts (RFC 3339)"),
                  "duration_minutes", integer("How long, in minutes", 5, 480))
              .required("title", "attendees", "start")
              .build()),
      Map.entry(
          "take_meeting_notes",
          c -> object(
                  "title", text("The meeting", 300),
                  "notes", text("The notes", 7_500),
                  "action_items", array(text("An action item", 1000), 0, 50))
              .required("title", "notes")
              .build()),
      Map.entry(
          "remember_preferences",
          c -> object(
                  "preference", text("The preference, as one sentence", 2000),
                  "subject", text("Whose preference", 200))
              .required("preference")
              .build()),
      Map.entry(
          "analyze_documents",
          c -> object(
                  "document_url", text("Where the document is", 2048),
                  "question", text("What to find out", 2000))
              .required("document_url", "question")
              .build()),
      Map.entry("web_research", c -> {
        Schema schema = object("question", text("What to research", 2000));
        if (c.has("allowedDomains")) {
          schema.property("domains", array(choice("A domain", c.get("allowedDomains")), 1, 20));
        }
        return schema.required("question").build();
      }),
      Map.entry(
          "forecast_trends",
          c -> object(
                  "metric", text("The metric to project", 200),
                  "horizon_days",
                      integer("How far ahead", 1, c.path("horizonDays").asInt(1)))
              .required("metric", "horizon_days")
              .build()));

  private ToolSchemas() {}

  /** The arguments' JSON Schema under this config; empty for a capability with no tool. */
  public static Optional<ObjectNode> parameters(String capabilityId, ObjectNode config) {
    Function<ObjectNode, ObjectNode> schema = PARAMETERS.get(capabilityId);
    return schema == null ? Optional.empty() : Optional.of(schema.apply(config));
  }

  /** The OpenAI function tool offering this capability under this config. */
  public static Optional<ObjectNode> tool(Capability capability, ObjectNode config) {
    return parameters(capability.id(), config).map(parameters -> {
      ObjectNode tool = Json.MAPPER.createObjectNode().put("type", "function");
      tool.putObject("function")
          .put("name", capability.id())
          .put("description", capability.description())
          .set("parameters", parameters);
      return tool;
    });
  }

  // ---- a small builder for the schemas above

  private static final class Schema {
    private final ObjectNode node = Json.MAPPER.createObjectNode().put("type", "object");
    private final ObjectNode properties = node.putObject("properties");

    Schema property(String name, ObjectNode schema) {
      properties.set(name, schema);
      return this;
    }

    Schema required(String... names) {
      ArrayNode required = node.putArray("required");
      for (String name : names) {
        required.add(name);
      }
      return this;
    }

    ObjectNode build() {
      node.put("additionalProperties", false);
      return node;
    }
  }

  private static Schema object(Object... namesAndSchemas) {
    Schema schema = new Schema();
    for (int i = 0; i < namesAndSchemas.length; i += 2) {
      schema.property((String) namesAndSchemas[i], (ObjectNode) namesAndSchemas[i + 1]);
    }
    return schema;
  }

  private static ObjectNode text(String description, int maxLength) {
    return Json.MAPPER
        .createObjectNode()
        .put("type", "string")
        .put("description", description)
        .put("minLength", 1)
        .put("maxLength", maxLength);
  }

  private static ObjectNode dateTime(String description) {
    return Json.MAPPER
        .createObjectNode()
        .put("type", "string")
        .put("format", "date-time")
        .put("description", description);
  }

  private static ObjectNode choice(String description, JsonNode values) {
    ObjectNode schema =
        Json.MAPPER.createObjectNode().put("type", "string").put("description", description);
    schema.set("enum", values == null ? Json.MAPPER.createArrayNode() : values.deepCopy());
    return schema;
  }

  private static ObjectNode integer(String description, int minimum, int maximum) {
    return Json.MAPPER
        .createObjectNode()
        .put("type", "integer")
        .put("description", description)
        .put("minimum", minimum)
        .put("maximum", maximum);
  }

  private static ObjectNode number(String description, double minimum, double maximum) {
    return Json.MAPPER
        .createObjectNode()
        .put("type", "number")
        .put("description", description)
        .put("minimum", minimum)
        .put("maximum", maximum);
  }

  private static ObjectNode array(ObjectNode items, int minItems, int maxItems) {
    ObjectNode schema = Json.MAPPER.createObjectNode().put("type", "array");
    schema.set("items", items);
    return schema.put("minItems", minItems).put("maxItems", maxItems);
  }

  private static ObjectNode lineItem() {
    return object(
            "sku", text("The item's catalog code", 200),
            "quantity", integer("How many", 1, 1_000_000))
        .required("sku", "quantity")
        .build();
  }
}
