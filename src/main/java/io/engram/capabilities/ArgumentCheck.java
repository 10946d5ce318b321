package io.engram.capabilities;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;

/**
 * Checks a model's tool arguments against the capability's schema ({@link ToolSchemas}), which
 * carries the config's limits: the subset of JSON Schema those schemas use (object with
 * properties, required and no other properties; string with length, enum and date-time; integer
 * and number with bounds; array with items and counts). The first violation is the reason given
 * back to the model, naming the argument, so it can correct itself.
 */
public final class ArgumentCheck {
  private ArgumentCheck() {}

  /** Why the arguments break the schema; empty when they fit it. */
  public static Optional<String> violation(JsonNode schema, JsonNode value) {
    return check(schema, value, "arguments");
  }

  private static Optional<String> check(JsonNode schema, JsonNode value, String where) {
    return switch (schema.path("type").asText()) {
      case "object" -> object(schema, value, where);
      case "array" -> array(schema, value, where);
      case "string" -> string(schema, value, where);
      case "integer", "number" -> number(schema, value, where);
      default -> Optional.of(where + " has a schema this server cannot check");
    };
  }

  private static Optional<String> object(JsonNode schema, JsonNode value, String where) {
    if (!value.isObject()) {
      return Optional.of(where + " must be an object");
    }
    for (JsonNode name : schema.path("required")) {
      if (!value.hasNonNull(name.asText())) {
        return Optional.of(where + "." + name.asText() + " is required");
      }
    }
    Iterator<Map.Entry<String, JsonNode>> fields = value.fields();
    while (fields.hasNext()) {
      Map.Entry<String, JsonNode> field = fields.next();
      JsonNode property = schema.path("properties").get(field.getKey());
      if (property == null) {
        return Optional.of(where + "." + field.getKey() + " is not an argument of this tool");
      }
      if (!field.getValue().isNull()) {
        Optional<String> inner = check(property, field.getValue(), where + "." + field.getKey());
        if (inner.isPresent()) {
          return inner;
        }
      }
    }
    return Optional.empty();
  }

  private static Optional<String> array(JsonNode schema, JsonNode value, String where) {
    if (!value.isArray()) {
      return Optional.of(where + " must be an array");
    }
    if (value.size() < schema.path("minItems").asInt(0)
        || value.size() > schema.path("maxItems").asInt(Integer.MAX_VALUE)) {
      return Optional.of(where + " must have " + schema.path("minItems").asInt(0) + " to "
          + schema.path("maxItems").asInt() + " items");
    }
    for (int i = 0; i < value.size(); i++) {
      Optional<String> inner = check(schema.get("items"), value.get(i), where + "[" + i + "]");
      if (inner.isPresent()) {
        return inner;
      }
    }
    return Optional.empty();
  }

  private static Optional<String> string(JsonNode schema, JsonNode value, String where) {
    if (!value.isTextual()) {
      return Optional.of(where + " must be a string");
    }
    String text = value.asText();
    JsonNode allowed = schema.get("enum");
    if (allowed != null) {
      for (JsonNode option : allowed) {
        if (option.asText().equals(text)) {
          return Optional.empty();
        }
      }
      return Optional.of(where + " '" + text + "' is not allowed; allowed: " + allowed);
    }
    if (text.length() < schema.path("minLength").asInt(0)
        || text.length() > schema.path("maxLength").asInt(Integer.MAX_VALUE)) {
      return Optional.of(where + " must be " + schema.path("minLength").asInt(0) + " to "
          + schema.path("maxLength").asInt() + " characters");
    }
    if (schema.path("format").asText().equals("date-time")) {
      try {
        OffsetDateTime.parse(text);
      } catch (DateTimeParseException e) {
        return Optional.of(where + " must be an RFC 3339 date-time such as 2026-05-01T09:00:00Z");
      }
    }
    return Optional.empty();
  }

  private static Optional<String> number(JsonNode schema, JsonNode value, String where) {
    boolean integer = schema.path("type").asText().equals("integer");
    if (!value.isNumber() || (integer && !value.canConvertToExactIntegral())) {
      return Optional.of(where + " must be " + (integer ? "an integer" : "a number"));
    }
    double number = value.asDouble();
    if ((schema.has("minimum") && number < schema.get("minimum").asDouble())
        || (schema.has("maximum") && number > schema.get("maximum").asDouble())) {
      return Optional.of(where + " must be from " + schema.get("minimum").asText() + " to "
          + schema.get("maximum").asText() + " (the assistant's configured limit)");
    }
    return Optional.empty();
  }
}
