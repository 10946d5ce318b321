package io.engram.capabilities;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.engram.organizations.Tier;
import io.engram.platform.WireNames;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * The capability registry, read from {@code capabilities/registry.yaml} on the classpath. The file
 * is checked strictly when the service starts: a malformed entry stops start-up with a message
 * naming the entry and the field, so a bad edit never reaches a request.
 */
public final class CapabilityRegistry {
  public static final String RESOURCE = "capabilities/registry.yaml";
  private static final Pattern ID = Pattern.compile("[a-z][a-z0-9_]{1,63}");
  private static final Set<String> ENTRY_KEYS = Set.of(
      "id",
      "name",
      "description",
      "category",
      "scope",
      "tierRequirement",
      "alwaysEnabled",
      "config");
  private static final Set<String> FIELD_KEYS = Set.of(
      "type",
      "required",
      "description",
      "minimum",
      "maximum",
      "minLength",
      "maxLength",
      "minItems",
      "maxItems",
      "enum");

  private final Map<String, Capability> byId;
  private final List<Capability> ordered;
  private final Map<String, CapabilityHandler> handlers;

  private CapabilityRegistry(
      Map<String, Capability> inFileOrder, Map<String, CapabilityHandler> handlers) {
    this.byId = Map.copyOf(inFileOrder);
    this.ordered = List.copyOf(inFileOrder.values());
    this.handlers = Map.copyOf(handlers);
  }

  /** The bundled registry; {@code handlers} decide which entries are executable. */
  public static CapabilityRegistry load(Collection<? extends CapabilityHandler> handlers) {
    try (InputStream in = CapabilityRegistry.class.getClassLoader().getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException(RESOURCE + " is missing from the classpath");
      }
      return parse(in, handlers);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static CapabilityRegistry parse(
      InputStream yaml, Collection<? extends CapabilityHandler> handlers) throws IOException {
    JsonNode root = new YAMLMapper().readTree(yaml);
    JsonNode entries = root == null ? null : root.get("capabilities");
    if (entries == null || !entries.isArray() || entries.isEmpty()) {
      throw invalid("the file must hold a non-empty 'capabilities' list");
    }
    Map<String, CapabilityHandler> byCapability = new HashMap<>();
    for (CapabilityHandler handler : handlers) {
      if (byCapability.put(handler.capabilityId(), handler) != null) {
        throw invalid("two handlers are registered for '" + handler.capabilityId() + "'");
      }
    }
    Set<String> executable = byCapability.keySet();
    Map<String, Capability> byId = new LinkedHashMap<>();
    for (JsonNode entry : entries) {
      Capability capability = entry(entry, executable);
      if (byId.putIfAbsent(capability.id(), capability) != null) {
        throw invalid("capability '" + capability.id() + "' is listed twice");
      }
    }
    for (CapabilityHandler handler : byCapability.values()) {
      Capability entry = byId.get(handler.capabilityId());
      if (entry == null) {
        throw invalid("a handler is registered for '" + handler.capabilityId()
            + "', which the registry does not list");
      }
      try {
        handler.checkEntry(entry);
      } catch (IllegalStateException e) {
        throw invalid("capability '" + entry.id() + "': " + e.getMessage());
      }
    }
    if (byId.values().stream().noneMatch(Capability::alwaysEnabled)) {
      throw invalid("no capability is alwaysEnabled; answer_questions must be");
    }
    return new CapabilityRegistry(byId, byCapability);
  }

  private static Capability entry(JsonNode entry, Set<String> executable) {
    String id = text(entry, "id", "an entry");
    if (!ID.matcher(id).matches()) {
      throw invalid("id '" + id + "' must be lowercase letters, digits and underscores");
    }
    String where = "capability '" + id + "'";
    onlyKeys(entry, ENTRY_KEYS, where);
    CapabilityCategory category = parsed(entry, "category", where, CapabilityCategory::fromId);
    CapabilityScope scope = parsed(entry, "scope", where, CapabilityScope::fromId);
    Tier tier = parsed(entry, "tierRequirement", where, Tier::fromId);
    JsonNode always = entry.get("alwaysEnabled");
    if (always != null && !always.isBoolean()) {
      throw invalid(where + ": alwaysEnabled must be true or false");
    }
    Map<String, ConfigSchemaField> config = new LinkedHashMap<>();
    JsonNode fields = entry.get("config");
    if (fields != null) {
      if (!fields.isObject()) {
        throw invalid(where + ": config must map field names to field definitions");
      }
      fields
          .fields()
          .forEachRemaining(field -> config.put(
              field.getKey(),
              field(
                  field.getKey(),
                  field.getValue(),
                  where + " config field '" + field.getKey() + "'")));
    }
    boolean alwaysEnabled = always != null && always.asBoolean();
    if (alwaysEnabled
        && (scope != CapabilityScope.BOTH || tier != Tier.FREE || !config.isEmpty())) {
      throw invalid(
          where + ": an alwaysEnabled capability must have scope both, tier free and no config");
    }
    return new Capability(
        id,
        text(entry, "name", where),
        text(entry, "description", where),
        category,
        scope,
        tier,
        alwaysEnabled,
        Collections.unmodifiableMap(config),
        executable.contains(id));
  }

  private static ConfigSchemaField field(String name, JsonNode node, String where) {
    if (!node.isObject()) {
      throw invalid(where + " must be an object with at least a type");
    }
    onlyKeys(node, FIELD_KEYS, where);
    ConfigSchemaField.Type type =
        parsed(node, "type", where, id -> WireNames.parse(ConfigSchemaField.Type.class, id));
    JsonNode required = node.get("required");
    if (required == null || !required.isBoolean()) {
      throw invalid(where + ": required must be true or false");
    }
    List<String> allowed = null;
    if (node.has("enum")) {
      allowed = new ArrayList<>();
      for (JsonNode value : node.get("enum")) {
        allowed.add(value.asText());
      }
      if (allowed.isEmpty()) {
        throw invalid(where + ": enum must list at least one value");
      }
    }
    String description = node.has("description") ? text(node, "description", where) : null;
    ConfigSchemaField field = new ConfigSchemaField(
        name,
        type,
        required.asBoolean(),
        description,
        decimal(node, "minimum", where),
        decimal(node, "maximum", where),
        count(node, "minLength", where),
        count(node, "maxLength", where),
        count(node, "minItems", where),
        count(node, "maxItems", where),
        allowed);
    checkBounds(field, where);
    return field;
  }

  /** Bounds that only fit their type, and lower bounds not above upper ones. */
  private static void checkBounds(ConfigSchemaField f, String where) {
    boolean numeric = f.fieldType() == ConfigSchemaField.Type.INTEGER
        || f.fieldType() == ConfigSchemaField.Type.NUMBER;
    boolean text = f.fieldType() == ConfigSchemaField.Type.STRING
        || f.fieldType() == ConfigSchemaField.Type.STRING_ARRAY;
    if (!numeric && (f.minimum() != null || f.maximum() != null)) {
      throw invalid(where + ": minimum and maximum apply to integer and number fields only");
    }
    if (!text && (f.minLength() != null || f.maxLength() != null || f.allowed() != null)) {
      throw invalid(
          where + ": minLength, maxLength and enum apply to string and string_array fields only");
    }
    if (f.fieldType() != ConfigSchemaField.Type.STRING_ARRAY
        && (f.minItems() != null || f.maxItems() != null)) {
      throw invalid(where + ": minItems and maxItems apply to string_array fields only");
    }
    if ((f.minimum() != null && f.maximum() != null && f.minimum().compareTo(f.maximum()) > 0)
        || (f.minLength() != null && f.maxLength() != null && f.minLength() > f.maxLength())
        || (f.minItems() != null && f.maxItems() != null && f.minItems() > f.maxItems())) {
      throw invalid(where + ": a lower bound is above its upper bound");
    }
  }

  private static void onlyKeys(JsonNode node, Set<String> allowed, String where) {
    for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!allowed.contains(name)) {
        throw invalid(where + ": unknown key '" + name + "'");
      }
    }
  }

  private static String text(JsonNode node, String key, String where) {
    JsonNode value = node.get(key);
    if (value == null || !value.isTextual() || value.asText().isBlank()) {
      throw invalid(where + ": '" + key + "' must be a non-empty string");
    }
    return value.asText().strip();
  }

  private static <T> T parsed(
      JsonNode node, String key, String where, Function<String, Optional<T>> parser) {
    String value = text(node, key, where);
    return parser
        .apply(value)
        .orElseThrow(() -> invalid(where + ": unknown " + key + " '" + value + "'"));
  }

  private static BigDecimal decimal(JsonNode node, String key, String where) {
    JsonNode value = node.get(key);
    if (value == null) {
      return null;
    }
    if (!value.isNumber()) {
      throw invalid(where + ": " + key + " must be a number");
    }
    return value.decimalValue();
  }

  private static Integer count(JsonNode node, String key, String where) {
    JsonNode value = node.get(key);
    if (value == null) {
      return null;
    }
    if (!value.isIntegralNumber() || !value.canConvertToInt() || value.asInt() < 0) {
      throw invalid(where + ": " + key + " must be a whole number of zero or more");
    }
    return value.asInt();
  }

  private static IllegalStateException invalid(String problem) {
    return new IllegalStateException(RESOURCE + ": " + problem);
  }

  public Optional<Capability> find(String id) {
    return Optional.ofNullable(byId.get(id));
  }

  /** The handler that executes the capability; empty for a metadata entry. */
  public Optional<CapabilityHandler> handler(String capabilityId) {
    return Optional.ofNullable(handlers.get(capabilityId));
  }

  /** Every entry, in registry file order. */
  public List<Capability> all() {
    return ordered;
  }

  /** The capabilities every assistant has; they are added to any set that leaves them out. */
  public List<Capability> alwaysEnabled() {
    return all().stream().filter(Capability::alwaysEnabled).toList();
  }

  public int size() {
    return byId.size();
  }
}
