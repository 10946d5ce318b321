package io.engram.platform;

import java.util.Locale;
import java.util.Optional;

/** Enums written on the wire as their lowercase constant name ({@code ORG_SHARED} is {@code org_shared}). */
public final class WireNames {

  private WireNames() {}

  public static String of(Enum<?> value) {
    return value.name().toLowerCase(Locale.ROOT);
  }

  /** The constant whose wire name is exactly {@code id}; empty for anything else, null included. */
  public static <E extends Enum<E>> Optional<E> parse(Class<E> type, String id) {
    for (E value : type.getEnumConstants()) {
      if (of(value).equals(id)) {
        return Optional.of(value);
      }
    }
    return Optional.empty();
  }
}
