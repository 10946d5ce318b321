package io.engram.capabilities;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.WireNames;
import java.math.BigDecimal;
import java.util.List;
import java.util.Optional;

/**
 * One field of a capability's config object, with its type and bounds as the registry file states
 * them. {@link #problem} says what is wrong with a submitted value, in words a person can act on.
 * Serialized as the field's entry in a capability's {@code configSchema}.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonPropertyOrder({
  "type",
  "required",
  "description",
  "minimum",
  "maximum",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "enum"
})
public record ConfigSchemaField(
    @JsonIgnore String name,
    @JsonIgnore Type fieldType,
    boolean required,
    String description,
    BigDecimal minimum,
    BigDecimal maximum,
    Integer minLength,
    Integer maxLength,
    Integer minItems,
    Integer maxItems,
    @JsonProperty("enum") List<String> allowed) {

  /** The JSON types a config field may have. */
  public enum Type {
    STRING,
    INTEGER,
    NUMBER,
    BOOLEAN,
    STRING_ARRAY;

    public String id() {
      return WireNames.of(this);
    }
  }

  @JsonProperty("type")
  public String type() {
    return fieldType.id();
  }

  /** What is wrong with {@code value} for this field, or empty when it is acceptable. */
  public Optional<String> problem(JsonNode value) {
    return switch (fieldType) {
      case BOOLEAN -> value.isBoolean() ? Optional.empty() : Optional.of("must be true or false");
      case INTEGER ->
        value.isIntegralNumber() || (value.isNumber() && isWhole(value.decimalValue()))
            ? rangeProblem(value.decimalValue(), "an integer")
            : Optional.of("must be " + describeRange("an integer"));
      case NUMBER ->
        value.isNumber()
            ? rangeProblem(value.decimalValue(), "a number")
            : Optional.of("must be " + describeRange("a number"));
      case STRING ->
        value.isTextual() ? textProblem(value.asText(), "") : Optional.of("must be a string");
      case STRING_ARRAY -> arrayProblem(value);
    };
  }

  private static boolean isWhole(BigDecimal number) {
    return number.stripTrailingZeros().scale() <= 0;
  }

  private Optional<String> rangeProblem(BigDecimal number, String what) {
    boolean tooLow = minimum != null && number.compareTo(minimum) < 0;
    boolean tooHigh = maximum != null && number.compareTo(maximum) > 0;
    return tooLow || tooHigh ? Optional.of("must be " + describeRange(what)) : Optional.empty();
  }

  private String describeRange(String what) {
    if (minimum != null && maximum != null) {
      return what + " between " + minimum.toPlainString() + " and " + maximum.toPlainString();
    }
    if (minimum != null) {
      return what + " of at least " + minimum.toPlainString();
    }
    return maximum == null ? what : what + " of at most " + maximum.toPlainString();
  }

  private Optional<String> textProblem(String text, String itemWords) {
    if (allowed != null && !allowed.contains(text)) {
      return Optional.of(itemWords + "must be one of " + String.join(", ", allowed));
    }
    if ((minLength != null && text.length() < minLength)
        || (maxLength != null && text.length() > maxLength)) {
      return Optional.of(itemWords + "must be " + lengthWords() + " characters long");
    }
    return Optional.empty();
  }

  private String lengthWords() {
    int min = minLength == null ? 0 : minLength;
    return maxLength == null
        ? "at least " + min
        : min == maxLength ? "exactly " + min : min + " to " + maxLength;
  }

  private Optional<String> arrayProblem(JsonNode value) {
    if (!value.isArray()) {
      return Optional.of("must be an array of strings");
    }
    if ((minItems != null && value.size() < minItems)
        || (maxItems != null && value.size() > maxItems)) {
      int min = minItems == null ? 0 : minItems;
      return Optional.of("must hold "
          + (maxItems == null ? "at least " + min : min + " to " + maxItems) + " items");
    }
    for (JsonNode item : value) {
      if (!item.isTextual()) {
        return Optional.of("must be an array of strings");
      }
      Optional<String> problem = textProblem(item.asText(), "each item ");
      if (problem.isPresent()) {
        return problem;
      }
    }
    return Optional.empty();
  }
}
