package io.engram.guardrails;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.guardrails.detect.JsonSchemaDetector;
import io.engram.guardrails.detect.PiiDetector;
import io.engram.guardrails.detect.RegexDetector;
import io.engram.platform.VisibleText;
import io.engram.platform.http.ApiException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A guardrail as a client writes it, read and checked field by field: every mistake is a 400 that
 * names the field as sent ({@code check.entities[2]}, {@code applies_to[1]}). A PATCH is the stored
 * guardrail with the patch merged in, checked again as a whole.
 */
public record GuardrailSpec(
    String name,
    Set<Phase> appliesTo,
    Check check,
    Action action,
    boolean restore,
    GuardrailScope scope,
    boolean enabled) {

  static final Set<String> FIELDS =
      Set.of("name", "applies_to", "check", "action", "restore", "scope", "enabled");
  private static final Set<String> SCOPE_FIELDS =
      Set.of("api_keys", "tokens", "assistants", "models");
  private static final int MAX_NAME = 128;
  private static final int MAX_TERMS = 500;
  private static final int MAX_TERM = 200;
  private static final int MAX_PATTERNS = 50;
  private static final int MAX_SCOPE_IDS = 100;
  /** How long a webhook has to answer when the guardrail does not say. */
  static final int DEFAULT_TIMEOUT_MS = 1_000;

  /** The phases enforced today: the others are refused by name rather than stored unenforced. */
  static final Set<Phase> ENFORCED =
      EnumSet.of(Phase.INPUT, Phase.OUTPUT, Phase.MEMORY_WRITE, Phase.MEMORY_INJECTION);

  /** Reads a whole guardrail (a create, or a stored one with a patch merged in). */
  public static GuardrailSpec parse(ObjectNode body) {
    unknownFields(body, FIELDS, "");
    String name = text(body.get("name"), "name", MAX_NAME);
    Set<Phase> phases = phases(body.get("applies_to"));
    Check check = check(body.get("check"));
    Action action = enumValue(body.get("action"), "action", "block, redact or flag")
        .flatMap(Action::fromId)
        .orElseThrow(() -> ApiException.badRequest("action", "'action' is block, redact or flag"));
    if (action == Action.REDACT && check instanceof Check.JsonSchema) {
      throw ApiException.badRequest(
          "action", "A json_schema check judges the whole text: its action is block or flag");
    }
    boolean restore = bool(body.get("restore"), "restore", false);
    if (restore && (action != Action.REDACT || !phases.contains(Phase.INPUT))) {
      // The originals come back in the answer to the client that sent them: only what an input
      // redaction hid from the provider has an original to give back.
      throw ApiException.badRequest(
          "restore", "'restore' is for a guardrail that redacts ('action': 'redact') the input");
    }
    return new GuardrailSpec(
        name,
        phases,
        check,
        action,
        restore,
        scope(body.get("scope")),
        bool(body.get("enabled"), "enabled", true));
  }

  private static Set<Phase> phases(JsonNode value) {
    if (value == null || !value.isArray() || value.isEmpty()) {
      throw ApiException.badRequest(
          "applies_to",
          "'applies_to' is a non-empty list of input, output, memory_write, memory_injection");
    }
    Set<Phase> phases = EnumSet.noneOf(Phase.class);
    for (int i = 0; i < value.size(); i++) {
      JsonNode item = value.get(i);
      String field = "applies_to[" + i + "]";
      Phase phase = (item.isTextual()
              ? Phase.fromId(item.asText())
              : java.util.Optional.<Phase>empty())
          .orElseThrow(() -> ApiException.badRequest(
              field, "'" + field + "' is input, output, memory_write or memory_injection"));
      if (!ENFORCED.contains(phase)) {
        throw ApiException.invalid(
            "unsupported_parameter",
            field,
            "'" + phase.id() + "' guardrails are not enforced by this version yet: input, "
                + "memory_write and memory_injection are");
      }
      phases.add(phase);
    }
    return phases;
  }

  private static Check check(JsonNode value) {
    if (value == null || !value.isObject()) {
      throw ApiException.badRequest("check", "'check' is an object with a 'type'");
    }
    ObjectNode check = (ObjectNode) value;
    String type = enumValue(check.get("type"), "check.type", "")
        .orElseThrow(() -> ApiException.badRequest("check.type", "'check.type' is required"));
    return switch (type) {
      case "pii" -> {
        unknownFields(check, Set.of("type", "entities"), "check.");
        yield new Check.Pii(entities(check.get("entities")));
      }
      case "secrets" -> {
        unknownFields(check, Set.of("type"), "check.");
        yield new Check.Secrets();
      }
      case "prompt_injection" -> {
        unknownFields(check, Set.of("type"), "check.");
        yield new Check.PromptInjection();
      }
      case "terms" -> {
        unknownFields(check, Set.of("type", "terms"), "check.");
        yield new Check.Terms(strings(check.get("terms"), "check.terms", MAX_TERMS, MAX_TERM));
      }
      case "regex" -> {
        unknownFields(check, Set.of("type", "patterns"), "check.");
        List<String> patterns = strings(
            check.get("patterns"), "check.patterns", MAX_PATTERNS, RegexDetector.MAX_PATTERN_CHARS);
        try {
          RegexDetector.compile(patterns);
        } catch (RegexDetector.InvalidPattern e) {
          throw ApiException.badRequest(
              "check.patterns[" + e.index() + "]",
              "'check.patterns[" + e.index() + "]' is not an RE2 pattern: " + e.getMessage());
        }
        yield new Check.Regex(patterns);
      }
      case "json_schema" -> {
        unknownFields(check, Set.of("type", "schema"), "check.");
        if (!(check.get("schema") instanceof ObjectNode schema)) {
          throw ApiException.badRequest("check.schema", "'check.schema' is a JSON Schema object");
        }
        try {
          JsonSchemaDetector.compile(schema);
        } catch (JsonSchemaDetector.InvalidSchema e) {
          throw ApiException.badRequest(
              "check.schema", "'check.schema' is not a JSON Schema (2020-12): " + e.getMessage());
        }
        yield new Check.JsonSchema(schema.deepCopy());
      }
      case "webhook" -> {
        unknownFields(check, Set.of("type", "url", "timeout_ms", "on_error"), "check.");
        yield new Check.Webhook(
            webhookUrl(check.get("url")),
            timeoutMs(check.get("timeout_ms")),
            enumValue(check.get("on_error"), "check.on_error", "allow or block")
                .map(onError -> switch (onError) {
                  case "allow" -> false;
                  case "block" -> true;
                  default ->
                    throw ApiException.badRequest(
                        "check.on_error", "'check.on_error' is allow or block");
                })
                .orElse(true));
      }
      default ->
        throw ApiException.badRequest(
            "check.type",
            "'check.type' is pii, secrets, terms, regex, prompt_injection, json_schema or "
                + "webhook, not '" + type + "'");
    };
  }

  private static java.net.URI webhookUrl(JsonNode value) {
    String url = text(value, "check.url", 2048);
    try {
      java.net.URI uri = new java.net.URI(url);
      if (("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))
          && uri.getHost() != null
          && uri.getUserInfo() == null) {
        return uri;
      }
    } catch (java.net.URISyntaxException e) {
      // said below
    }
    throw ApiException.badRequest(
        "check.url", "'check.url' is an http or https URL with a host (and no credentials in it)");
  }

  private static int timeoutMs(JsonNode value) {
    if (value == null || value.isNull()) {
      return DEFAULT_TIMEOUT_MS;
    }
    if (!value.canConvertToInt()
        || !value.isIntegralNumber()
        || value.asInt() < 50
        || value.asInt() > 10_000) {
      throw ApiException.badRequest(
          "check.timeout_ms", "'check.timeout_ms' is an integer from 50 to 10000");
    }
    return value.asInt();
  }

  private static List<String> entities(JsonNode value) {
    if (value == null || value.isNull()) {
      return List.of();
    }
    if (!value.isArray()) {
      throw ApiException.badRequest("check.entities", "'check.entities' is a list of entities");
    }
    Set<String> entities = new LinkedHashSet<>();
    for (int i = 0; i < value.size(); i++) {
      String entity = value.get(i).isTextual() ? value.get(i).asText() : "";
      if (!PiiDetector.ENTITIES.contains(entity)) {
        throw ApiException.badRequest(
            "check.entities[" + i + "]",
            "'check.entities[" + i + "]' is one of " + String.join(", ", PiiDetector.ENTITIES));
      }
      entities.add(entity);
    }
    return List.copyOf(entities);
  }

  private static GuardrailScope scope(JsonNode value) {
    if (value == null || value.isNull()) {
      return GuardrailScope.EVERYONE;
    }
    if (!value.isObject()) {
      throw ApiException.badRequest(
          "scope", "'scope' is an object of api_keys, tokens, assistants and models");
    }
    unknownFields((ObjectNode) value, SCOPE_FIELDS, "scope.");
    return new GuardrailScope(
        optionalStrings(value.get("api_keys"), "scope.api_keys"),
        optionalStrings(value.get("tokens"), "scope.tokens"),
        optionalStrings(value.get("assistants"), "scope.assistants"),
        optionalStrings(value.get("models"), "scope.models"));
  }

  /** A scope's list: absent, null or empty covers every one of its kind. */
  private static List<String> optionalStrings(JsonNode value, String field) {
    return value == null || value.isNull() || (value.isArray() && value.isEmpty())
        ? List.of()
        : strings(value, field, MAX_SCOPE_IDS, 256);
  }

  private static List<String> strings(JsonNode value, String field, int most, int longest) {
    if (value == null || !value.isArray() || value.isEmpty() || value.size() > most) {
      throw ApiException.badRequest(
          field, "'" + field + "' is a list of 1 to " + most + " strings");
    }
    List<String> strings = new ArrayList<>();
    for (int i = 0; i < value.size(); i++) {
      strings.add(text(value.get(i), field + "[" + i + "]", longest));
    }
    return strings;
  }

  private static String text(JsonNode value, String field, int longest) {
    if (value == null || !value.isTextual() || VisibleText.isEmpty(value.asText())) {
      throw ApiException.badRequest(field, "'" + field + "' is required: a non-empty string");
    }
    if (value.asText().length() > longest) {
      throw ApiException.badRequest(field, "'" + field + "' is at most " + longest + " characters");
    }
    return value.asText();
  }

  private static java.util.Optional<String> enumValue(JsonNode value, String field, String what) {
    if (value == null || value.isNull()) {
      return java.util.Optional.empty();
    }
    if (!value.isTextual()) {
      throw ApiException.badRequest(
          field, "'" + field + "' is a string" + (what.isEmpty() ? "" : ": " + what));
    }
    return java.util.Optional.of(value.asText());
  }

  private static boolean bool(JsonNode value, String field, boolean absent) {
    if (value == null || value.isNull()) {
      return absent;
    }
    if (!value.isBoolean()) {
      throw ApiException.badRequest(field, "'" + field + "' is true or false");
    }
    return value.asBoolean();
  }

  private static void unknownFields(ObjectNode node, Set<String> known, String prefix) {
    Iterator<String> names = node.fieldNames();
    while (names.hasNext()) {
      String name = names.next();
      if (!known.contains(name)) {
        throw ApiException.badRequest(
            prefix + name,
            "Unknown field '" + prefix + name + "'; fields: "
                + String.join(", ", new java.util.TreeSet<>(known)));
      }
    }
  }
}
