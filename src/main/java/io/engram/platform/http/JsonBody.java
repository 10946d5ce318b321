package io.engram.platform.http;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.platform.VisibleText;
import io.engram.platform.json.Json;
import io.javalin.http.Context;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * A request's JSON object with typed, bounded accessors. Every problem becomes a 4xx
 * {@link ApiException} naming the field, so handlers never see a malformed value.
 */
public final class JsonBody {

  private final ObjectNode node;

  private JsonBody(ObjectNode node) {
    this.node = node;
  }

  /** Wraps an object built in-process (the admin CLI builds its bodies from flags). */
  public static JsonBody of(ObjectNode node) {
    return new JsonBody(node);
  }

  /** A JSON object that arrived other than as a request body (a WebSocket message), with the same NUL rule. */
  public static JsonBody received(ObjectNode node) {
    refuseNul(node, null);
    return new JsonBody(node);
  }

  /**
   * Reads the body of an Engram route: 415 for a non-JSON content type, 413 when too large, 400
   * when malformed or not an object, and 400 for a field sent as an explicit {@code null}: on these
   * routes null means nothing a caller could want (leaving a field out gives its default), so it
   * is refused rather than guessed at.
   */
  public static JsonBody parse(Context ctx, long maxBytes) {
    JsonBody body = parseOpenAi(ctx, maxBytes);
    for (var field : body.node.properties()) {
      if (field.getValue().isNull()) {
        throw ApiException.badRequest(
            field.getKey(),
            "'" + field.getKey() + "' must not be null; leave it out to use its default");
      }
    }
    return body;
  }

  /**
   * Reads a JSON merge patch (RFC 7396) by the same rules, where an explicit {@code null} is
   * meaningful: it removes the member it names. The object is returned whole, nulls included.
   */
  public static ObjectNode parseMergePatch(Context ctx, long maxBytes) {
    return parseObject(ctx, maxBytes);
  }

  /**
   * The body's JSON object as it came (nulls kept), read by the same rules, for protocols that
   * read their own messages (JSON-RPC on /mcp).
   */
  public static ObjectNode parseObject(Context ctx, long maxBytes) {
    return parseOpenAi(ctx, maxBytes).node;
  }

  /**
   * Reads the body of an OpenAI-compatible route (chat, completions, embeddings) by the same
   * rules, except that an explicit {@code null} means the field is absent: OpenAI's API reads it
   * so, and clients built on typed models send nulls for every unset parameter.
   */
  public static JsonBody parseOpenAi(Context ctx, long maxBytes) {
    String contentType = ctx.contentType();
    long declared = ctx.req().getContentLengthLong();
    if (declared > maxBytes) {
      throw tooLarge(maxBytes);
    }
    refuseEncodedBody(ctx.header("Content-Encoding"));
    if (contentType == null || !isJson(contentType)) {
      if (declared <= 0 && contentType == null) {
        throw ApiException.badRequest(
            null, "A JSON request body is required (Content-Type: application/json)");
      }
      throw ApiException.unsupportedMediaType("application/json", contentType);
    }
    byte[] bytes;
    try (var in = ctx.bodyInputStream()) {
      bytes = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, maxBytes + 1));
    } catch (IOException e) {
      throw unreadable(ctx, e);
    }
    if (bytes.length > maxBytes) {
      throw tooLarge(maxBytes);
    }
    if (bytes.length == 0) {
      throw ApiException.badRequest(null, "A JSON request body is required");
    }
    JsonNode parsed;
    try (JsonParser parser = Json.MAPPER.createParser(bytes)) {
      parsed = Json.MAPPER.readTree(parser);
      if (parsed != null && parser.nextToken() != null) {
        // {"text":"a"}{"text":"b"} would otherwise be read as its first half.
        throw ApiException.badRequest(
            null,
            "The request body must be exactly one JSON value; more follows it at line "
                + parser.currentLocation().getLineNr()
                + ", column "
                + parser.currentLocation().getColumnNr());
      }
    } catch (JsonProcessingException e) {
      var location = e.getLocation();
      String where = location == null
          ? ""
          : " at line " + location.getLineNr() + ", column " + location.getColumnNr();
      throw ApiException.badRequest(null, "Malformed JSON" + where + ": " + e.getOriginalMessage());
    } catch (IOException e) {
      throw ApiException.badRequest(null, "The request body could not be read");
    }
    if (!(parsed instanceof ObjectNode object)) {
      throw ApiException.badRequest(null, "The request body must be a JSON object");
    }
    refuseNul(object, null);
    return new JsonBody(object);
  }

  /**
   * A body that stopped arriving (the connection's timeout, {@code network.connection_timeout},
   * expired while it was read) or broke off: the answer closes the connection, since the rest of
   * the body will not come (without it the server waited the timeout once more, to drain it,
   * before closing: a stalled client was cut at twice its timeout).
   */
  public static ApiException unreadable(io.javalin.http.Context ctx, IOException e) {
    ctx.header("Connection", "close");
    for (Throwable cause = e; cause != null; cause = cause.getCause()) {
      if (cause instanceof java.util.concurrent.TimeoutException) {
        return ApiException.of(
            408,
            ErrorType.INVALID_REQUEST_ERROR,
            "request_timeout",
            "The request body stopped arriving for longer than the connection timeout"
                + " (network.connection_timeout); the connection is closed",
            null);
      }
    }
    return ApiException.badRequest(null, "The request body could not be read");
  }

  /**
   * Bodies are read as sent: a compressed body is refused rather than read as if it were plain
   * (which would store the compressed bytes' misreading, or fail later in a confusing way).
   */
  public static void refuseEncodedBody(String contentEncoding) {
    if (contentEncoding != null
        && !contentEncoding.isBlank()
        && !contentEncoding.strip().equalsIgnoreCase("identity")) {
      throw ApiException.unsupportedMediaType(
          "an uncompressed body (no Content-Encoding)",
          "Content-Encoding: " + contentEncoding.strip());
    }
  }

  /**
   * No string or field name anywhere in the body may hold a NUL character (stored as text,
   * PostgreSQL refuses it: a 500 instead of a 400; SQLite would keep it silently) or half of a
   * UTF-16 surrogate pair ({@code "\ud800"} alone is valid JSON but no character: the database
   * would store a '?' the client never sent).
   */
  private static void refuseNul(JsonNode node, String field) {
    if (node.isTextual()) {
      refuseUnstorable(node.asText(), field == null ? "A value" : "'" + field + "'", field);
    }
    for (var entry : node.properties()) {
      refuseUnstorable(entry.getKey(), "Field names", null);
      refuseNul(entry.getValue(), field == null ? entry.getKey() : field);
    }
    if (node.isArray()) {
      node.forEach(item -> refuseNul(item, field));
    }
  }

  private static void refuseUnstorable(String text, String what, String field) {
    if (text.indexOf('\0') >= 0) {
      throw ApiException.badRequest(field, what + " must not contain a NUL character");
    }
    if (hasLoneSurrogate(text)) {
      throw ApiException.badRequest(
          field,
          what + " must be valid Unicode: it holds half of a UTF-16 surrogate pair, which is no"
              + " character");
    }
  }

  /** True when a high surrogate lacks its low half, or a low one stands without its high half. */
  private static boolean hasLoneSurrogate(String text) {
    boolean expectLow = false;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (expectLow != Character.isLowSurrogate(c)) {
        return true;
      }
      expectLow = Character.isHighSurrogate(c);
    }
    return expectLow;
  }

  private static boolean isJson(String contentType) {
    String type = contentType.split(";", 2)[0].trim().toLowerCase(Locale.ROOT);
    return type.equals("application/json")
        || (type.startsWith("application/") && type.endsWith("+json"));
  }

  private static ApiException tooLarge(long maxBytes) {
    return ApiException.tooLarge("The request body exceeds the limit of " + maxBytes + " bytes");
  }

  /** Refuses fields the route does not know, so a typo is an error rather than a silent default. */
  public JsonBody allowOnly(Set<String> allowed) {
    for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!allowed.contains(name)) {
        throw ApiException.badRequest(
            name,
            "Unknown field '" + name + "'; allowed fields: "
                + String.join(", ", allowed.stream().sorted().toList()));
      }
    }
    return this;
  }

  /**
   * The field's value as sent, or null when the field is absent. An explicit JSON null is refused
   * here: on routes that use this it would say nothing the caller could mean.
   */
  public JsonNode rawNotNull(String field) {
    JsonNode value = node.get(field);
    if (value != null && value.isNull()) {
      throw ApiException.badRequest(
          field, "'" + field + "' must not be null; leave it out instead");
    }
    return value;
  }

  public boolean has(String field) {
    JsonNode value = node.get(field);
    return value != null && !value.isNull();
  }

  public String requiredString(String field, int maxLength) {
    return optionalString(field, maxLength)
        .orElseThrow(() -> ApiException.badRequest(field, "'" + field + "' is required"));
  }

  public Optional<String> optionalString(String field, int maxLength) {
    if (!has(field)) {
      return Optional.empty();
    }
    JsonNode value = node.get(field);
    if (!value.isTextual()) {
      throw ApiException.badRequest(field, "'" + field + "' must be a string");
    }
    String text = value.asText().strip();
    if (text.isEmpty()) {
      throw ApiException.badRequest(field, "'" + field + "' must not be empty");
    }
    if (VisibleText.isEmpty(text)) {
      throw ApiException.badRequest(
          field,
          "'" + field + "' must not be empty: it holds only invisible characters (white space,"
              + " control or format characters, or marks without a letter)");
    }
    if (text.length() > maxLength) {
      throw ApiException.badRequest(
          field, "'" + field + "' must be at most " + maxLength + " characters");
    }
    return Optional.of(text);
  }

  public Optional<Integer> optionalInt(String field, int min, int max) {
    if (!has(field)) {
      return Optional.empty();
    }
    JsonNode value = node.get(field);
    if (!value.isIntegralNumber()
        || !value.canConvertToInt()
        || value.asInt() < min
        || value.asInt() > max) {
      throw ApiException.badRequest(
          field, "'" + field + "' must be an integer between " + min + " and " + max);
    }
    return Optional.of(value.asInt());
  }

  public Optional<List<String>> optionalStringList(String field, int maxItems, int maxLength) {
    if (!has(field)) {
      return Optional.empty();
    }
    JsonNode value = node.get(field);
    if (!value.isArray()) {
      throw ApiException.badRequest(field, "'" + field + "' must be an array of strings");
    }
    if (value.size() > maxItems) {
      throw ApiException.badRequest(
          field, "'" + field + "' may hold at most " + maxItems + " items");
    }
    List<String> items = new ArrayList<>();
    for (JsonNode item : value) {
      if (!item.isTextual() || item.asText().isBlank() || item.asText().length() > maxLength) {
        throw ApiException.badRequest(
            field,
            "'" + field + "' must contain only non-empty strings of at most " + maxLength
                + " characters");
      }
      items.add(item.asText().strip());
    }
    return Optional.of(List.copyOf(items));
  }

  /** A point in time given as Unix seconds or an RFC 3339 timestamp. */
  public Optional<Instant> optionalInstant(String field) {
    if (!has(field)) {
      return Optional.empty();
    }
    JsonNode value = node.get(field);
    Optional<Instant> instant = value.isIntegralNumber() && value.canConvertToLong()
        ? Timestamps.ofEpochSeconds(value.asLong())
        : value.isTextual() ? Timestamps.parse(value.asText()) : Optional.empty();
    return Optional.of(instant.orElseThrow(() -> Timestamps.invalid(field)));
  }

  public Optional<Boolean> optionalBoolean(String field) {
    if (!has(field)) {
      return Optional.empty();
    }
    JsonNode value = node.get(field);
    if (!value.isBoolean()) {
      throw ApiException.badRequest(field, "'" + field + "' must be true or false");
    }
    return Optional.of(value.asBoolean());
  }

  /** A JSON number within [min, max]; strings such as "0.5" are refused, not coerced. */
  public Optional<Double> optionalNumber(String field, double min, double max) {
    if (!has(field)) {
      return Optional.empty();
    }
    JsonNode value = node.get(field);
    double number = value.isNumber() ? value.asDouble() : Double.NaN;
    if (!value.isNumber() || Double.isNaN(number) || number < min || number > max) {
      throw ApiException.badRequest(
          field, "'" + field + "' must be a number between " + min + " and " + max);
    }
    return Optional.of(number);
  }

  /** A JSON object, serialized back to compact text, or empty when absent. */
  public Optional<ObjectNode> optionalObject(String field) {
    if (!has(field)) {
      return Optional.empty();
    }
    JsonNode value = node.get(field);
    if (!(value instanceof ObjectNode object)) {
      throw ApiException.badRequest(field, "'" + field + "' must be a JSON object");
    }
    return Optional.of(object);
  }

  /** The raw node of a field, null when absent or JSON null. */
  public JsonNode get(String field) {
    return has(field) ? node.get(field) : null;
  }

  /** The object as received. */
  public ObjectNode node() {
    return node;
  }
}
