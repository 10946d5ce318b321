package io.engram.organizations;

import com.fasterxml.jackson.annotation.JsonValue;

/** A numeric plan limit that may be unlimited; unlimited is written as JSON null. */
public record Limit(long value) {
  /** Written for "unlimited" in the plan table. */
  static final long U = -1;

  public static final Limit UNLIMITED = new Limit(U);

  public static Limit of(long value) {
    if (value < 0) {
      throw new IllegalArgumentException("a limit is zero or more, or unlimited");
    }
    return new Limit(value);
  }

  public boolean isUnlimited() {
    return value == U;
  }

  @JsonValue
  public Long json() {
    return isUnlimited() ? null : value;
  }

  @Override
  public String toString() {
    return isUnlimited() ? "unlimited" : String.valueOf(value);
  }
}
