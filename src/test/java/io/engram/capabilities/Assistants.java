package io.engram.capabilities;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.platform.json.Json;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * Calls to the assistant and capability routes as one caller (an API key, or a signed-in session
 * through {@code as}), and valid configs built from the registry's own schema.
 */
final class Assistants {
  final Http http;
  private final UnaryOperator<Http.Call> as;

  Assistants(TestServer server, UnaryOperator<Http.Call> as) {
    this.http = server.http;
    this.as = as;
  }

  static Assistants withKey(TestServer server, String apiKey) {
    return new Assistants(server, call -> call.bearer(apiKey));
  }

  static Assistants as(TestServer server, TestServer.Session session) {
    return new Assistants(server, session::on);
  }

  Http.Response send(Http.Call call) {
    return as.apply(call).send();
  }

  Http.Response create(String name, String type, String ownerId) {
    ObjectNode body = Json.MAPPER.createObjectNode().put("name", name).put("type", type);
    if (ownerId != null) {
      body.put("ownerId", ownerId);
    }
    return send(http.post("/api/assistants").json(body.toString()));
  }

  /** Creates the assistant and returns its id, failing the test if that is refused. */
  String created(String name, String type, String ownerId) {
    Http.Response response = create(name, type, ownerId);
    assertThat(response.status()).as(response.text()).isEqualTo(201);
    return response.json().at("/assistant/_id").asText();
  }

  Http.Response patch(String assistantId, String json) {
    return send(http.patch("/api/assistants/" + assistantId + "/capabilities").json(json));
  }

  Http.Response capabilities(String assistantId) {
    return send(http.get("/api/assistants/" + assistantId + "/capabilities"));
  }

  Http.Response available(String assistantId) {
    return send(http.get("/api/assistants/" + assistantId + "/available-capabilities"));
  }

  Http.Response history(String assistantId, String query) {
    return send(http.get("/api/assistants/" + assistantId + "/capabilities/history" + query));
  }

  JsonNode registry(String query) {
    Http.Response response = send(http.get("/api/capabilities/registry" + query));
    assertThat(response.status()).as(response.text()).isEqualTo(200);
    return response.json();
  }

  /** The registry entry of one capability. */
  JsonNode entry(String capabilityId) {
    for (JsonNode entry : registry("").get("capabilities")) {
      if (entry.get("id").asText().equals(capabilityId)) {
        return entry;
      }
    }
    throw new AssertionError("no capability " + capabilityId);
  }

  /** A PATCH body enabling these capabilities, each with a valid config built from its schema. */
  static String validBody(List<JsonNode> entries) {
    ObjectNode body = Json.MAPPER.createObjectNode();
    ArrayNode ids = body.putArray("capabilities");
    ObjectNode configs = body.putObject("capabilityConfigs");
    for (JsonNode entry : entries) {
      ids.add(entry.get("id").asText());
      configs.set(entry.get("id").asText(), validConfig(entry));
    }
    return body.toString();
  }

  /** Every required field at its lower bound (or first allowed value). */
  static ObjectNode validConfig(JsonNode entry) {
    ObjectNode config = Json.MAPPER.createObjectNode();
    entry.get("configSchema").fields().forEachRemaining(field -> {
      JsonNode schema = field.getValue();
      if (schema.get("required").asBoolean()) {
        config.set(field.getKey(), validValue(schema));
      }
    });
    return config;
  }

  private static JsonNode validValue(JsonNode schema) {
    return switch (schema.get("type").asText()) {
      case "boolean" -> Json.MAPPER.getNodeFactory().booleanNode(true);
      case "integer" ->
        Json.MAPPER.getNodeFactory().numberNode(schema.path("minimum").asLong(0));
      case "number" ->
        Json.MAPPER.getNodeFactory().numberNode(schema.path("minimum").decimalValue());
      case "string" -> Json.MAPPER.getNodeFactory().textNode(validText(schema, 0));
      case "string_array" -> {
        ArrayNode items = Json.MAPPER.createArrayNode();
        for (int i = 0; i < Math.max(1, schema.path("minItems").asInt(1)); i++) {
          items.add(validText(schema, i));
        }
        yield items;
      }
      default -> throw new AssertionError("unknown field type in " + schema);
    };
  }

  private static String validText(JsonNode schema, int index) {
    if (schema.has("enum")) {
      return schema.get("enum").get(index % schema.get("enum").size()).asText();
    }
    int length = Math.max(schema.path("minLength").asInt(1), 3);
    if (schema.has("maxLength")) {
      length = Math.min(length, schema.get("maxLength").asInt());
    }
    return ("v" + index + "xxxxxxxx").substring(0, length);
  }

  static List<String> ids(JsonNode array) {
    List<String> ids = new ArrayList<>();
    array.forEach(item -> ids.add(item.isObject() ? item.get("id").asText() : item.asText()));
    return ids;
  }
}
