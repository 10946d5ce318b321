package io.engram.memory;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.http.ApiException;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.regex.Pattern;
import org.apache.lucene.document.DoublePoint;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.LongPoint;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.IndexableField;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.MatchNoDocsQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.TermInSetQuery;
import org.apache.lucene.util.BytesRef;

/**
 * A retrieval's or a list's {@code filters} on memory metadata: each key (a top-level field, or a
 * nested one by its dotted path) to a value (equality: a string, number or boolean; for a list
 * value in the metadata, one of its items) or to an operator object: {@code eq}, {@code in} (one
 * of a list), and {@code gt}, {@code gte}, {@code lt}, {@code lte} on numbers or on times (RFC
 * 3339 strings). Conditions combine with and. The same filters are a Lucene query (so a search
 * filters inside the index, before its top k) and a test on a row's metadata (a list, and the
 * recheck of what the index returned): {@link #query()} and {@link #matches(JsonNode)} agree.
 */
public final class MetadataFilters {
  public static final MetadataFilters NONE = new MetadataFilters(List.of());
  public static final String FIELD = "filters";
  static final int MAX_CONDITIONS = 20;
  static final int MAX_IN = 100;
  /** How deep nested metadata objects are indexed (a.b.c.d). */
  static final int MAX_DEPTH = 4;

  private static final Pattern KEY =
      Pattern.compile("^[A-Za-z0-9_$-]{1,64}(\\.[A-Za-z0-9_$-]{1,64}){0,3}$");
  private static final Set<String> OPERATORS = Set.of("eq", "in", "gt", "gte", "lt", "lte");
  public static final String TEXT_PREFIX = "meta.s.";
  public static final String NUMBER_PREFIX = "meta.n.";
  public static final String TIME_PREFIX = "meta.t.";

  /** One condition: {@code key} compared by {@code operator} with {@code values} (one but for in). */
  public record Condition(String key, String operator, List<JsonNode> values) {}

  private final List<Condition> conditions;

  private MetadataFilters(List<Condition> conditions) {
    this.conditions = List.copyOf(conditions);
  }

  public boolean isEmpty() {
    return conditions.isEmpty();
  }

  /** Parses a request's {@code filters} object (null: none); every mistake is a 400 naming it. */
  public static MetadataFilters parse(JsonNode filters) {
    if (filters == null || filters.isNull()) {
      return NONE;
    }
    if (!filters.isObject()) {
      throw bad(
          FIELD, "'filters' must be an object of metadata field to value or {operator: value}");
    }
    if (filters.size() > MAX_CONDITIONS) {
      throw bad(FIELD, "'filters' may hold at most " + MAX_CONDITIONS + " fields");
    }
    List<Condition> conditions = new ArrayList<>();
    for (Map.Entry<String, JsonNode> entry : filters.properties()) {
      String key = entry.getKey();
      String where = FIELD + "." + key;
      if (!KEY.matcher(key).matches()) {
        throw bad(where, "A filter's field is 1-4 dotted names of letters, digits, _, $ and -");
      }
      JsonNode value = entry.getValue();
      if (value.isObject()) {
        if (value.isEmpty()) {
          throw bad(where, "'" + where + "' names no operator; use one of " + OPERATORS);
        }
        for (Map.Entry<String, JsonNode> op : value.properties()) {
          conditions.add(condition(key, op.getKey(), op.getValue(), where + "." + op.getKey()));
        }
      } else {
        conditions.add(condition(key, "eq", value, where));
      }
    }
    return new MetadataFilters(conditions);
  }

  private static Condition condition(String key, String operator, JsonNode value, String where) {
    if (!OPERATORS.contains(operator)) {
      throw bad(where, "Unknown filter operator '" + operator + "'; use one of " + OPERATORS);
    }
    return switch (operator) {
      case "eq" -> new Condition(key, operator, List.of(scalar(value, where)));
      case "in" -> {
        if (!value.isArray() || value.isEmpty() || value.size() > MAX_IN) {
          throw bad(where, "'in' takes a list of 1 to " + MAX_IN + " strings, numbers or booleans");
        }
        List<JsonNode> values = new ArrayList<>();
        value.forEach(item -> values.add(scalar(item, where)));
        yield new Condition(key, operator, values);
      }
      default -> {
        if (!value.isNumber() && !(value.isTextual() && instant(value.asText()) != null)) {
          throw bad(
              where,
              "'" + operator + "' compares with a number or a time (RFC 3339, such as"
                  + " 2030-01-31T00:00:00Z)");
        }
        yield new Condition(key, operator, List.of(value));
      }
    };
  }

  private static JsonNode scalar(JsonNode value, String where) {
    if (!value.isTextual() && !value.isNumber() && !value.isBoolean()) {
      throw bad(where, "A filter value is a string, a number or a boolean");
    }
    if (value.isTextual() && value.asText().length() > 1_000) {
      throw bad(where, "A filter value is at most 1,000 characters");
    }
    return value;
  }

  private static ApiException bad(String param, String message) {
    return ApiException.badRequest(param, message);
  }

  // ---- the index: what a memory's metadata adds to its document, and the query over it

  /**
   * One value a memory's metadata adds to its index document: {@code field} is the key's path under
   * {@link #TEXT_PREFIX} (a String), {@link #NUMBER_PREFIX} (a Double) or {@link #TIME_PREFIX} (a
   * Long, epoch milliseconds). Every engine indexes these, so a filter means the same in each.
   */
  public record IndexedValue(String field, Object value) {}

  /** The values a memory's metadata adds to its document: one per scalar, item and nested path. */
  public static List<IndexedValue> indexedValues(JsonNode metadata) {
    List<IndexedValue> values = new ArrayList<>();
    if (metadata != null && metadata.isObject()) {
      walk("", metadata, 1, (key, value) -> {
        if (value.isTextual()) {
          values.add(new IndexedValue(TEXT_PREFIX + key, value.asText()));
          Instant at = instant(value.asText());
          if (at != null) {
            values.add(new IndexedValue(TIME_PREFIX + key, at.toEpochMilli()));
          }
        } else if (value.isNumber()) {
          values.add(new IndexedValue(NUMBER_PREFIX + key, value.asDouble()));
        } else if (value.isBoolean()) {
          values.add(new IndexedValue(TEXT_PREFIX + key, value.asText()));
        }
      });
    }
    return values;
  }

  /** The Lucene fields of {@link #indexedValues}. */
  static List<IndexableField> fields(JsonNode metadata) {
    List<IndexableField> fields = new ArrayList<>();
    for (IndexedValue indexed : indexedValues(metadata)) {
      fields.add(
          switch (indexed.value()) {
            case String text -> new StringField(indexed.field(), text, Field.Store.NO);
            case Double number -> new DoublePoint(indexed.field(), number);
            case Long at -> new LongPoint(indexed.field(), at);
            default -> throw new IllegalStateException("unexpected " + indexed);
          });
    }
    return fields;
  }

  /** The conditions, for an engine that writes its own query of them. */
  public List<Condition> conditions() {
    return conditions;
  }

  /** Every scalar of the metadata with its dotted path; a list's items under the list's path. */
  private static void walk(
      String prefix, JsonNode node, int depth, BiConsumer<String, JsonNode> out) {
    for (Map.Entry<String, JsonNode> entry : node.properties()) {
      String key = prefix + entry.getKey();
      JsonNode value = entry.getValue();
      if (value.isObject()) {
        if (depth < MAX_DEPTH) {
          walk(key + ".", value, depth + 1, out);
        }
      } else if (value.isArray()) {
        value.forEach(item -> out.accept(key, item));
      } else {
        out.accept(key, value);
      }
    }
  }

  /** The conditions as one Lucene filter (null when there are none). */
  public Query query() {
    if (conditions.isEmpty()) {
      return null;
    }
    BooleanQuery.Builder all = new BooleanQuery.Builder();
    for (Condition condition : conditions) {
      all.add(query(condition), BooleanClause.Occur.FILTER);
    }
    return all.build();
  }

  private static Query query(Condition c) {
    if (c.operator().equals("eq") || c.operator().equals("in")) {
      BooleanQuery.Builder any = new BooleanQuery.Builder();
      List<BytesRef> texts = new ArrayList<>();
      List<Double> numbers = new ArrayList<>();
      for (JsonNode value : c.values()) {
        if (value.isNumber()) {
          numbers.add(value.asDouble());
        } else {
          texts.add(new BytesRef(value.asText()));
        }
      }
      if (!texts.isEmpty()) {
        any.add(new TermInSetQuery(TEXT_PREFIX + c.key(), texts), BooleanClause.Occur.SHOULD);
      }
      if (!numbers.isEmpty()) {
        any.add(
            DoublePoint.newSetQuery(
                NUMBER_PREFIX + c.key(),
                numbers.stream().mapToDouble(Double::doubleValue).toArray()),
            BooleanClause.Occur.SHOULD);
      }
      return any.build();
    }
    JsonNode bound = c.values().getFirst();
    if (bound.isNumber()) {
      double v = bound.asDouble();
      return switch (c.operator()) {
        case "gt" ->
          DoublePoint.newRangeQuery(
              NUMBER_PREFIX + c.key(), Math.nextUp(v), Double.POSITIVE_INFINITY);
        case "gte" ->
          DoublePoint.newRangeQuery(NUMBER_PREFIX + c.key(), v, Double.POSITIVE_INFINITY);
        case "lt" ->
          DoublePoint.newRangeQuery(
              NUMBER_PREFIX + c.key(), Double.NEGATIVE_INFINITY, Math.nextDown(v));
        default -> DoublePoint.newRangeQuery(NUMBER_PREFIX + c.key(), Double.NEGATIVE_INFINITY, v);
      };
    }
    long at = instant(bound.asText()).toEpochMilli();
    return switch (c.operator()) {
      case "gt" ->
        at == Long.MAX_VALUE
            ? new MatchNoDocsQuery()
            : LongPoint.newRangeQuery(TIME_PREFIX + c.key(), at + 1, Long.MAX_VALUE);
      case "gte" -> LongPoint.newRangeQuery(TIME_PREFIX + c.key(), at, Long.MAX_VALUE);
      case "lt" ->
        at == Long.MIN_VALUE
            ? new MatchNoDocsQuery()
            : LongPoint.newRangeQuery(TIME_PREFIX + c.key(), Long.MIN_VALUE, at - 1);
      default -> LongPoint.newRangeQuery(TIME_PREFIX + c.key(), Long.MIN_VALUE, at);
    };
  }

  // ---- a row: the same conditions on its metadata

  /** Whether a memory with this metadata (null: none) meets every condition. */
  public boolean matches(JsonNode metadata) {
    if (conditions.isEmpty()) {
      return true;
    }
    Map<String, List<JsonNode>> values = new LinkedHashMap<>();
    if (metadata != null && metadata.isObject()) {
      walk(
          "",
          metadata,
          1,
          (key, value) -> values.computeIfAbsent(key, k -> new ArrayList<>()).add(value));
    }
    for (Condition condition : conditions) {
      List<JsonNode> held = values.getOrDefault(condition.key(), List.of());
      if (held.stream().noneMatch(value -> meets(condition, value))) {
        return false;
      }
    }
    return true;
  }

  private static boolean meets(Condition c, JsonNode value) {
    if (c.operator().equals("eq") || c.operator().equals("in")) {
      return c.values().stream().anyMatch(wanted -> same(wanted, value));
    }
    JsonNode bound = c.values().getFirst();
    int order;
    if (bound.isNumber()) {
      if (!value.isNumber()) {
        return false;
      }
      order = Double.compare(value.asDouble(), bound.asDouble());
    } else {
      Instant at = value.isTextual() ? instant(value.asText()) : null;
      if (at == null) {
        return false;
      }
      order = Long.compare(at.toEpochMilli(), instant(bound.asText()).toEpochMilli());
    }
    return switch (c.operator()) {
      case "gt" -> order > 0;
      case "gte" -> order >= 0;
      case "lt" -> order < 0;
      default -> order <= 0;
    };
  }

  /** Equality as the index sees it: numbers by value, strings and booleans by their text. */
  private static boolean same(JsonNode wanted, JsonNode value) {
    if (wanted.isNumber()) {
      return value.isNumber() && Double.compare(wanted.asDouble(), value.asDouble()) == 0;
    }
    return (value.isTextual() || value.isBoolean()) && wanted.asText().equals(value.asText());
  }

  /** An RFC 3339 time (or null when the text is not one), to the millisecond as indexed. */
  public static Instant instant(String text) {
    if (text.length() < 20 || text.length() > 40 || !Character.isDigit(text.charAt(0))) {
      return null;
    }
    try {
      Instant at = java.time.OffsetDateTime.parse(text).toInstant();
      return Instant.ofEpochMilli(at.toEpochMilli());
    } catch (DateTimeParseException | ArithmeticException e) {
      return null;
    }
  }
}
