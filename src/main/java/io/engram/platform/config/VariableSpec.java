package io.engram.platform.config;

import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * One environment variable of the spec's table: its type, default and allowed range. The same
 * definitions validate the process environment at start-up and, later, organization and
 * instance variables set through the API, so a value is judged by one rule wherever it comes from.
 */
public record VariableSpec(
    String name,
    Type type,
    String defaultValue,
    Double min,
    Double max,
    List<String> options,
    String description) {

  public enum Type {
    INTEGER,
    FLOAT,
    BOOLEAN,
    STRING,
    PATH,
    ENUM,
    CSV
  }

  public static VariableSpec integer(
      String name, String def, long min, long max, String description) {
    return new VariableSpec(
        name, Type.INTEGER, def, (double) min, (double) max, List.of(), description);
  }

  public static VariableSpec decimal(
      String name, String def, double min, double max, String description) {
    return new VariableSpec(name, Type.FLOAT, def, min, max, List.of(), description);
  }

  public static VariableSpec bool(String name, String def, String description) {
    return new VariableSpec(
        name, Type.BOOLEAN, def, null, null, List.of("true", "false"), description);
  }

  public static VariableSpec string(String name, String def, String description) {
    return new VariableSpec(name, Type.STRING, def, null, null, List.of(), description);
  }

  public static VariableSpec path(String name, String def, String description) {
    return new VariableSpec(name, Type.PATH, def, null, null, List.of(), description);
  }

  public static VariableSpec oneOf(
      String name, String def, List<String> options, String description) {
    return new VariableSpec(name, Type.ENUM, def, null, null, List.copyOf(options), description);
  }

  public static VariableSpec csv(String name, String def, String description) {
    return new VariableSpec(name, Type.CSV, def, null, null, List.of(), description);
  }

  /** Returns an error message naming the variable and its allowed range, or empty when valid. */
  public Optional<String> check(String raw) {
    String value = raw.trim();
    return switch (type) {
      case INTEGER -> checkNumber(value, true);
      case FLOAT -> checkNumber(value, false);
      case BOOLEAN ->
        parseBoolean(value).isPresent()
            ? Optional.empty()
            : Optional.of(name + " must be true or false, got '" + raw + "'");
      case ENUM ->
        options.contains(value.toLowerCase(Locale.ROOT))
            ? Optional.empty()
            : Optional.of(
                name + " must be one of " + String.join(", ", options) + ", got '" + raw + "'");
      case PATH ->
        value.isEmpty() ? Optional.of(name + " must be a non-empty path") : Optional.empty();
      case STRING, CSV -> Optional.empty();
    };
  }

  private Optional<String> checkNumber(String value, boolean integer) {
    double parsed;
    try {
      parsed = integer ? Long.parseLong(value) : Double.parseDouble(value);
    } catch (NumberFormatException e) {
      return Optional.of(name + " must be " + (integer ? "an integer" : "a number") + rangeText()
          + ", got '" + value + "'");
    }
    if (Double.isNaN(parsed) || (min != null && parsed < min) || (max != null && parsed > max)) {
      return Optional.of(name + " must be" + rangeText() + ", got '" + value + "'");
    }
    return Optional.empty();
  }

  /** The allowed range in words, for messages and documentation. */
  public String rangeText() {
    if (min == null && max == null) {
      return "";
    }
    boolean integer = type == Type.INTEGER;
    String lo = integer ? String.valueOf(min.longValue()) : String.valueOf(min);
    if (max == null) {
      return " at least " + lo;
    }
    String hi = integer ? String.valueOf(max.longValue()) : String.valueOf(max);
    return " between " + lo + " and " + hi;
  }

  static Optional<Boolean> parseBoolean(String value) {
    return switch (value.trim().toLowerCase(Locale.ROOT)) {
      case "true", "1", "yes", "on" -> Optional.of(true);
      case "false", "0", "no", "off" -> Optional.of(false);
      default -> Optional.empty();
    };
  }
}
