package io.engram.operations;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.inference.local.TinyModel;
import io.engram.platform.json.Json;
import io.engram.support.Http;
import io.engram.support.Seeded;
import io.engram.support.TestServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Every numeric field of the request schemas of the routes that generate, embed, remember and
 * retrieve, read from the server's own OpenAPI document: sent as null, it is the field left out
 * where the schema allows null (a 2xx), or else a 2xx or a 400 naming the field; sent as a random
 * value of another type or out of range, it is a 2xx or a 400 naming the field. Never a 500, and
 * the test client holds every exchange to the document. Seeded ({@link Seeded}).
 */
@ExtendWith(Seeded.class)
class NumericFieldsTest {
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  static TestServer server;
  static String key;
  static JsonNode openApi;

  /** A route and a body it answers 2xx to. */
  record Operation(String path, String body) {}

  static final List<Operation> OPERATIONS = List.of(
      new Operation(
          "/v1/chat/completions",
          "{\"model\":\"" + TinyModel.ID + "\",\"max_tokens\":3,\"memory\":false,"
              + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"),
      new Operation(
          "/v1/completions",
          "{\"model\":\"" + TinyModel.ID + "\",\"prompt\":\"hi\",\"max_tokens\":3}"),
      new Operation(
          "/v1/messages",
          "{\"model\":\"" + TinyModel.ID + "\",\"max_tokens\":3,\"memory\":false,"
              + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"),
      new Operation(
          "/v1/responses",
          "{\"model\":\"" + TinyModel.ID + "\",\"input\":\"hi\",\"max_output_tokens\":16,"
              + "\"memory\":false}"),
      new Operation("/v1/embeddings", "{\"model\":\"all-minilm-l6-v2\",\"input\":\"hi\"}"),
      new Operation("/v1/memory/retrieve", "{\"query\":\"fiscal year\"}"),
      new Operation("/v1/memory", "{\"text\":\"The office opens at nine\"}"));

  @BeforeAll
  static void start() throws IOException {
    Path models = Files.createTempDirectory("engram-models");
    TinyModel.write(models, 7);
    server = TestServer.builder()
        .env("MODEL_CACHE_DIR", models.toString())
        .env("DEFAULT_MODEL", TinyModel.ID)
        .env("RATE_LIMIT_REQUESTS", "1000000")
        .start();
    String org = server.createOrganization("growth");
    key = server.tokenWithEveryScope(org);
    openApi = server.http.get("/openapi.json").send().json();
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  @Test
  void everyNumericFieldIsAbsentOrRefusedByNameWhenNullOrWrong(Random random) {
    int checked = 0;
    for (Operation operation : OPERATIONS) {
      Map<String, JsonNode> numeric = numericProperties(requestSchema(operation.path()));
      assertThat(numeric).as("numeric fields of %s", operation.path()).isNotEmpty();
      for (Map.Entry<String, JsonNode> field : numeric.entrySet()) {
        boolean nullable = types(field.getValue()).contains("null");
        expect(operation, field.getKey(), NODES.nullNode(), nullable);
        for (int i = 0; i < 3; i++) {
          expect(operation, field.getKey(), wrong(random), false);
        }
        checked++;
      }
    }
    assertThat(checked).isGreaterThanOrEqualTo(15);
  }

  private static void expect(Operation operation, String field, JsonNode value, boolean mustPass) {
    ObjectNode body = Json.read(operation.body(), ObjectNode.class);
    body.set(field, value);
    Http.Response response =
        server.http.post(operation.path()).bearer(key).json(Json.write(body)).send();
    String what = "%s %s -> %s".formatted(operation.path(), body, response.text());
    if (mustPass) {
      assertThat(response.status()).as(what).isBetween(200, 299);
      return;
    }
    assertThat(response.status()).as(what).isIn(200, 201, 400);
    if (response.status() == 400) {
      assertThat(response.json().at("/error/param").asText()).as(what).startsWith(field);
    }
  }

  /** Not a number within any range a schema here allows, or a number of the wrong kind. */
  private static JsonNode wrong(Random random) {
    return switch (random.nextInt(8)) {
      case 0 -> NODES.textNode(String.valueOf(random.nextInt(100)));
      case 1 -> NODES.booleanNode(random.nextBoolean());
      case 2 -> NODES.arrayNode().add(random.nextInt(10));
      case 3 -> NODES.objectNode().put("value", 1);
      case 4 -> NODES.numberNode(-1 - random.nextInt(1000));
      case 5 -> NODES.numberNode(Long.MAX_VALUE - random.nextInt(1000));
      case 6 -> NODES.numberNode(random.nextDouble() * 3 + 0.5);
      default -> NODES.numberNode(1e300 * (random.nextBoolean() ? 1 : -1));
    };
  }

  private static JsonNode requestSchema(String path) {
    JsonNode schema =
        openApi.path("paths").path(path).at("/post/requestBody/content/application~1json/schema");
    assertThat(schema.isMissingNode())
        .as("POST %s's schema in /openapi.json", path)
        .isFalse();
    return schema;
  }

  /** The top-level properties whose type is integer or number, through allOf and $ref. */
  private static Map<String, JsonNode> numericProperties(JsonNode schema) {
    Map<String, JsonNode> found = new LinkedHashMap<>();
    if (schema.has("$ref")) {
      String ref = schema.get("$ref").asText();
      return numericProperties(openApi.at(ref.substring(1)));
    }
    schema.path("allOf").forEach(part -> found.putAll(numericProperties(part)));
    schema.path("properties").properties().forEach(property -> {
      List<String> types = types(property.getValue());
      if (types.contains("integer") || types.contains("number")) {
        found.put(property.getKey(), property.getValue());
      }
    });
    return found;
  }

  private static List<String> types(JsonNode property) {
    List<String> types = new ArrayList<>();
    JsonNode type = property.path("type");
    if (type.isArray()) {
      type.forEach(t -> types.add(t.asText()));
    } else if (type.isTextual()) {
      types.add(type.asText());
    }
    return types;
  }
}
