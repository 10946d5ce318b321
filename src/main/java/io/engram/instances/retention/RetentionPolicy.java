package io.engram.instances.retention;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.instances.storage.DataClass;
import io.engram.objectstores.ObjectStoreConnections;
import io.engram.objectstores.ObjectUri;
import io.engram.platform.http.ApiException;
import java.math.BigDecimal;
import java.nio.file.FileSystems;
import java.nio.file.PathMatcher;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * One retention policy, with the spec's fields, checked: {@code type} a data class the spec names,
 * counts and ages whole and in range, {@code min_age_days} only beside {@code keep_latest},
 * {@code pattern} a glob over the path inside the class (files only),
 * {@code export_before_delete} only with an {@code export_destination}, and destinations
 * object-store URIs of a bucket an instance of the organization connected.
 */
public record RetentionPolicy(
    DataClass type,
    Integer maxAgeDays,
    Integer minAgeDays,
    Integer keepLatest,
    BigDecimal maxSizeGb,
    String pattern,
    boolean exportBeforeDelete,
    String exportDestination,
    String archiveTo) {

  public static final int MAX_POLICIES = 50;
  static final int MAX_DAYS = 36_500;
  static final int MAX_KEEP = 1_000_000;
  private static final Set<String> FIELDS = Set.of(
      "type",
      "max_age_days",
      "min_age_days",
      "keep_latest",
      "max_size_gb",
      "pattern",
      "export_before_delete",
      "export_destination",
      "archive_to");
  private static final Set<DataClass> TYPES = Set.of(
      DataClass.CONVERSATION_HISTORY, DataClass.LORA_ADAPTERS, DataClass.RESULTS, DataClass.DATA);

  /**
   * The policies of a {@code POST /retention} body; 400 naming the first bad field. {@code
   * reachable}: whether the organization connected a destination's bucket.
   */
  public static List<RetentionPolicy> parseAll(JsonNode policies, Predicate<ObjectUri> reachable) {
    if (policies == null || !policies.isArray()) {
      throw ApiException.badRequest(
          "policies", "'policies' must be an array of retention policies");
    }
    if (policies.size() > MAX_POLICIES) {
      throw ApiException.badRequest(
          "policies", "At most " + MAX_POLICIES + " retention policies per organization");
    }
    List<RetentionPolicy> parsed = new ArrayList<>();
    for (int i = 0; i < policies.size(); i++) {
      parsed.add(parse(policies.get(i), "policies[" + i + "]", reachable));
    }
    return parsed;
  }

  static RetentionPolicy parse(JsonNode node, String at, Predicate<ObjectUri> reachable) {
    if (node == null || !node.isObject()) {
      throw ApiException.badRequest(at, "A retention policy is an object");
    }
    for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!FIELDS.contains(name)) {
        throw ApiException.badRequest(at + "." + name, "Unknown field '" + name + "'");
      }
    }
    JsonNode typeNode = node.get("type");
    DataClass type = typeNode != null && typeNode.isTextual()
        ? DataClass.of(typeNode.asText()).filter(TYPES::contains).orElse(null)
        : null;
    if (type == null) {
      throw ApiException.badRequest(
          at + ".type", "'type' is one of conversation_history, lora_adapters, results, data");
    }
    Integer maxAge = count(node, at, "max_age_days", 1, MAX_DAYS);
    Integer minAge = count(node, at, "min_age_days", 0, MAX_DAYS);
    Integer keep = count(node, at, "keep_latest", 0, MAX_KEEP);
    if (minAge != null && keep == null) {
      throw ApiException.badRequest(
          at + ".min_age_days", "'min_age_days' goes with 'keep_latest' (the spec's rule)");
    }
    BigDecimal maxSize = null;
    JsonNode size = node.get("max_size_gb");
    if (size != null) {
      if (!size.isNumber()
          || size.decimalValue().signum() < 0
          || size.decimalValue().compareTo(BigDecimal.valueOf(1_000_000)) > 0) {
        throw ApiException.badRequest(
            at + ".max_size_gb", "'max_size_gb' is a number of GB between 0 and 1,000,000");
      }
      maxSize = size.decimalValue();
    }
    String pattern = text(node, at, "pattern");
    if (pattern != null) {
      if (type == DataClass.CONVERSATION_HISTORY) {
        throw ApiException.badRequest(
            at + ".pattern", "'pattern' matches file names; conversation history has none");
      }
      try {
        matcher(pattern);
      } catch (IllegalArgumentException e) {
        throw ApiException.badRequest(at + ".pattern", "'pattern' is not a glob: " + pattern);
      }
    }
    boolean export = false;
    JsonNode exportNode = node.get("export_before_delete");
    if (exportNode != null) {
      if (!exportNode.isBoolean()) {
        throw ApiException.badRequest(at + ".export_before_delete", "A boolean");
      }
      export = exportNode.asBoolean();
    }
    String exportDestination = destination(node, at, "export_destination", reachable);
    String archiveTo = destination(node, at, "archive_to", reachable);
    if (export && exportDestination == null) {
      throw ApiException.badRequest(
          at + ".export_destination", "'export_before_delete' needs an 'export_destination'");
    }
    if (maxAge == null && keep == null && maxSize == null) {
      throw ApiException.badRequest(
          at, "A policy says what to delete: max_age_days, keep_latest or max_size_gb");
    }
    return new RetentionPolicy(
        type, maxAge, minAge, keep, maxSize, pattern, export, exportDestination, archiveTo);
  }

  /** Whether a path inside the policy's class is one the policy governs. */
  boolean governs(String pathInClass) {
    return pattern == null || matcher(pattern).matches(java.nio.file.Path.of(pathInClass));
  }

  public Map<String, Object> toView() {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("type", type.wireName());
    putIf(view, "max_age_days", maxAgeDays);
    putIf(view, "min_age_days", minAgeDays);
    putIf(view, "keep_latest", keepLatest);
    putIf(view, "max_size_gb", maxSizeGb);
    putIf(view, "pattern", pattern);
    view.put("export_before_delete", exportBeforeDelete);
    putIf(view, "export_destination", exportDestination);
    putIf(view, "archive_to", archiveTo);
    return view;
  }

  private static void putIf(Map<String, Object> view, String name, Object value) {
    if (value != null) {
      view.put(name, value);
    }
  }

  private static PathMatcher matcher(String glob) {
    return FileSystems.getDefault().getPathMatcher("glob:" + glob);
  }

  private static Integer count(JsonNode node, String at, String field, int min, int max) {
    JsonNode value = node.get(field);
    if (value == null) {
      return null;
    }
    if (!value.canConvertToInt()
        || !value.isIntegralNumber()
        || value.asInt() < min
        || value.asInt() > max) {
      throw ApiException.badRequest(
          at + "." + field, "'" + field + "' is a whole number from " + min + " to " + max);
    }
    return value.asInt();
  }

  private static String text(JsonNode node, String at, String field) {
    JsonNode value = node.get(field);
    if (value == null) {
      return null;
    }
    if (!value.isTextual() || value.asText().isBlank() || value.asText().length() > 512) {
      throw ApiException.badRequest(at + "." + field, "'" + field + "' is text, 1-512 characters");
    }
    return value.asText();
  }

  /**
   * An object-store URI ({@code s3://bucket/prefix}, {@code gs://...}, {@code azure://...}) of a
   * bucket an instance of the organization connected: a policy is not kept to export where
   * nothing could be written.
   */
  private static String destination(
      JsonNode node, String at, String field, Predicate<ObjectUri> reachable) {
    String uri = text(node, at, field);
    if (uri == null) {
      return null;
    }
    ObjectUri parsed = ObjectUri.parse(uri, at + "." + field);
    if (!reachable.test(parsed)) {
      throw ObjectStoreConnections.notConfigured(parsed, at + "." + field);
    }
    return parsed.toString();
  }
}
