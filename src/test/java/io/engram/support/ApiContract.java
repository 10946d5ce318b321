package io.engram.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import io.engram.platform.http.RouteFamily;
import io.engram.platform.json.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * The OpenAPI document as a contract the tests hold the server to: every exchange {@link Http}
 * makes is checked here. A response must have its status documented for its operation (errors
 * fall back to their route family's error shape) and a JSON body that validates against the
 * documented schema; a request the server accepted (2xx) must validate against the documented
 * request body. Paths the document does not have (test probe routes, unknown paths) are the route
 * list test's business and are not checked here.
 */
public final class ApiContract {
  private static final JsonNode DOCUMENT = load();
  private static final List<PathTemplate> PATHS = paths();
  private static final SchemaRegistry SCHEMAS =
      SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12);
  private static final Map<String, Schema> BY_POINTER = new ConcurrentHashMap<>();

  private record PathTemplate(String template, Pattern pattern, int literals) {}

  private ApiContract() {}

  /** One exchange as the client saw it; bodies may be null. */
  public record Exchange(
      String method,
      String pathAndQuery,
      String requestType,
      String requestBody,
      int status,
      String responseType,
      String responseBody) {}

  /** The exchange's contract violations; empty when it keeps the document's word. */
  public static List<String> violations(Exchange exchange) {
    String path = exchange.pathAndQuery().split("\\?", 2)[0];
    PathTemplate template = match(path);
    if (template == null) {
      return List.of();
    }
    String where = exchange.method() + " " + template.template() + " -> " + exchange.status();
    JsonNode operation = DOCUMENT
        .path("paths")
        .path(template.template())
        .path(exchange.method().toLowerCase(Locale.ROOT));
    if (operation.isMissingNode()) {
      return exchange.status() == 405 || exchange.status() == 404
          ? List.of()
          : List.of(where + ": the method is not documented for this path");
    }
    List<String> found = new ArrayList<>();
    String pointer =
        "/paths/" + escape(template.template()) + "/" + exchange.method().toLowerCase(Locale.ROOT);
    checkResponse(exchange, operation, pointer, where, found);
    if (exchange.status() / 100 == 2
        && isJson(exchange.requestType())
        && exchange.requestBody() != null
        && !exchange.requestBody().isBlank()) {
      JsonNode body = resolve(operation.path("requestBody"));
      if (body.path("content").has("application/json")) {
        validate(
            pointerOf(operation.path("requestBody"), pointer + "/requestBody")
                + "/content/application~1json/schema",
            exchange.requestBody(),
            where + " request",
            found);
      }
    }
    return found;
  }

  private static void checkResponse(
      Exchange exchange, JsonNode operation, String pointer, String where, List<String> found) {
    JsonNode responses = operation.path("responses");
    String key = String.valueOf(exchange.status());
    if (!responses.has(key)) {
      key = responses.has(exchange.status() / 100 + "XX")
          ? exchange.status() / 100 + "XX"
          : responses.has("default") ? "default" : null;
    }
    String schemaPointer;
    if (key == null) {
      if (exchange.status() < 400) {
        found.add(where + ": the status is not documented for this operation");
        return;
      }
      // Undocumented errors still have to be in their route family's error shape.
      schemaPointer = "/components/schemas/"
          + switch (RouteFamily.of(exchange.pathAndQuery().split("\\?", 2)[0])) {
            case PRODUCT -> "ProductError";
            case ANTHROPIC -> "AnthropicError";
            case OPENAI -> "OpenAIError";
          };
    } else {
      JsonNode response = responses.path(key);
      JsonNode content = resolve(response).path("content");
      if (content.has("*/*")) {
        return; // a stored file's own bytes, in whatever type it was uploaded with
      }
      if (!content.has("application/json")) {
        if (isJson(exchange.responseType())
            && exchange.responseBody() != null
            && !exchange.responseBody().isEmpty()
            && !content.has("text/event-stream")) {
          found.add(where + ": answers a JSON body the document does not describe");
        }
        return;
      }
      if (!content.path("application/json").has("schema")) {
        found.add(where + ": the document shows JSON without a schema for it");
        return;
      }
      schemaPointer = pointerOf(response, pointer + "/responses/" + escape(key))
          + "/content/application~1json/schema";
    }
    if (isJson(exchange.responseType())) {
      validate(schemaPointer, exchange.responseBody(), where, found);
    } else if (!(exchange.responseType() != null
        && exchange.responseType().startsWith("text/event-stream"))) {
      found.add(where + ": answers " + exchange.responseType() + " where the document says JSON");
    }
  }

  private static void validate(
      String schemaPointer, String body, String where, List<String> found) {
    JsonNode instance;
    try {
      instance = Json.MAPPER.readTree(body);
    } catch (IOException e) {
      found.add(where + ": the body is not JSON: " + e.getMessage());
      return;
    }
    Schema schema = BY_POINTER.computeIfAbsent(schemaPointer, ApiContract::schemaAt);
    for (Error error : schema.validate(instance)) {
      found.add(where + ": " + error.getInstanceLocation() + " " + error.getMessage() + " (schema "
          + schemaPointer + ")");
    }
  }

  /** The whole document as the schema resource, so its local $refs resolve, entered at the pointer. */
  private static Schema schemaAt(String pointer) {
    ObjectNode root = DOCUMENT.deepCopy();
    root.put("$schema", "https://json-schema.org/draft/2020-12/schema");
    // A fragment is part of a URI: the braces of path templates are percent-encoded there.
    root.put("$ref", "#" + pointer.replace("{", "%7B").replace("}", "%7D"));
    return SCHEMAS.getSchema(root);
  }

  /** A response or request body given by $ref is checked where the $ref points. */
  private static String pointerOf(JsonNode node, String pointer) {
    return node.has("$ref") ? node.get("$ref").asText().substring(1) : pointer;
  }

  /** A node given by a local $ref, followed; any other node as it is. */
  public static JsonNode resolve(JsonNode node) {
    return node.has("$ref") ? DOCUMENT.at(node.get("$ref").asText().substring(1)) : node;
  }

  /** One operation of the document: its method (upper case), path template and definition. */
  public record Operation(String method, String template, JsonNode node) {}

  /** Every operation the document lists, but the operator's read-outs (/metrics, /openapi.json). */
  public static List<Operation> operations() {
    List<Operation> operations = new ArrayList<>();
    JsonNode paths = DOCUMENT.path("paths");
    for (Iterator<String> names = paths.fieldNames(); names.hasNext(); ) {
      String template = names.next();
      if (template.equals("/metrics") || template.equals("/openapi.json")) {
        continue;
      }
      paths.path(template).properties().forEach(entry -> {
        if (Set.of("get", "post", "patch", "put", "delete").contains(entry.getKey())) {
          operations.add(new Operation(
              entry.getKey().toUpperCase(java.util.Locale.ROOT), template, entry.getValue()));
        }
      });
    }
    return operations;
  }

  /** The OpenAPI document the exchanges are checked against. */
  public static JsonNode document() {
    return DOCUMENT;
  }

  private static String escape(String token) {
    return token.replace("~", "~0").replace("/", "~1");
  }

  private static boolean isJson(String contentType) {
    return contentType != null
        && contentType.toLowerCase(Locale.ROOT).startsWith("application/json");
  }

  /** The documented path the request's path is, literal segments before parameters (as the router matches). */
  private static PathTemplate match(String path) {
    PathTemplate best = null;
    for (PathTemplate template : PATHS) {
      if (template.pattern().matcher(path).matches()
          && (best == null || template.literals() > best.literals())) {
        best = template;
      }
    }
    return best;
  }

  private static List<PathTemplate> paths() {
    List<PathTemplate> templates = new ArrayList<>();
    for (Iterator<String> names = DOCUMENT.path("paths").fieldNames(); names.hasNext(); ) {
      String template = names.next();
      StringBuilder regex = new StringBuilder();
      int literals = 0;
      for (String segment : template.substring(1).split("/")) {
        boolean parameter = segment.startsWith("{") && segment.endsWith("}");
        // {path} is a storage path: it spans segments, as the route does.
        regex
            .append('/')
            .append(
                parameter ? (segment.equals("{path}") ? ".+" : "[^/]+") : Pattern.quote(segment));
        literals += parameter ? 0 : 1;
      }
      templates.add(new PathTemplate(template, Pattern.compile(regex.toString()), literals));
    }
    return List.copyOf(templates);
  }

  private static JsonNode load() {
    try (InputStream in = ApiContract.class.getResourceAsStream("/openapi.yaml")) {
      return new ObjectMapper(new YAMLFactory())
          .readTree(new String(in.readAllBytes(), StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
