package io.engram.guardrails.detect;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import io.engram.platform.json.Json;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * An organization's JSON Schema (2020-12): it fires on a text that is not a JSON document valid
 * against the schema (a model asked for structured output that answered prose, or a field
 * missing). The finding covers the whole text: there is no part of it to redact, so such a check
 * blocks or flags. A streamed answer is screened once whole.
 */
public final class JsonSchemaDetector implements Detector {
  public static final String KIND = "json_schema";

  private static final SchemaRegistry SCHEMAS =
      SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12);
  private static final String DIALECT = "https://json-schema.org/draft/2020-12/schema";

  private final Schema schema;

  private JsonSchemaDetector(Schema schema) {
    this.schema = schema;
  }

  /** The schema compiled, or why it is not one (the reason names where, never fetches). */
  public static JsonSchemaDetector compile(ObjectNode source) {
    String remote = remoteReference(source, "");
    if (remote != null) {
      throw new InvalidSchema(remote);
    }
    if (source.has("$schema") && !DIALECT.equals(source.path("$schema").asText())) {
      throw new InvalidSchema("'$schema' is " + DIALECT + " or left out");
    }
    List<Error> errors = SCHEMAS.getSchema(SchemaLocation.of(DIALECT)).validate(source);
    if (!errors.isEmpty()) {
      Error first = errors.getFirst();
      throw new InvalidSchema(first.getInstanceLocation() + " " + first.getMessage());
    }
    try {
      return new JsonSchemaDetector(SCHEMAS.getSchema(source));
    } catch (RuntimeException e) {
      throw new InvalidSchema(e.getMessage());
    }
  }

  /** A schema that is not JSON Schema 2020-12, or reaches outside itself. */
  public static final class InvalidSchema extends RuntimeException {
    InvalidSchema(String reason) {
      super(reason, null, false, false);
    }
  }

  /**
   * The first reference to another document ({@code $ref}, {@code $dynamicRef} not starting with
   * '#'), which would have the validator fetch from the network: refused where it is written.
   */
  private static String remoteReference(JsonNode node, String at) {
    if (node.isObject()) {
      for (Iterator<Map.Entry<String, JsonNode>> fields = node.fields(); fields.hasNext(); ) {
        Map.Entry<String, JsonNode> field = fields.next();
        String name = field.getKey();
        if ((name.equals("$ref") || name.equals("$dynamicRef"))
            && !field.getValue().asText().startsWith("#")) {
          return "'" + at + "/" + name + "' refers outside the schema; only local references"
              + " ('#/$defs/...') are followed";
        }
        String found = remoteReference(field.getValue(), at + "/" + name);
        if (found != null) {
          return found;
        }
      }
    } else if (node.isArray()) {
      for (int i = 0; i < node.size(); i++) {
        String found = remoteReference(node.get(i), at + "/" + i);
        if (found != null) {
          return found;
        }
      }
    }
    return null;
  }

  @Override
  public List<Finding> find(String text) {
    JsonNode document;
    try {
      document = Json.MAPPER.readTree(text);
    } catch (Exception notJson) {
      document = null;
    }
    if (text.isEmpty() // nothing to screen: an empty answer holds nothing it could let out
        || (document != null
            && !document.isMissingNode()
            && schema.validate(document).isEmpty())) {
      return List.of();
    }
    return List.of(new Finding(KIND, 0, text.length()));
  }

  @Override
  public int reach() {
    return WHOLE_TEXT;
  }
}
