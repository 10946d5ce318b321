package io.engram.access;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

/** Permissions an API key can carry; {@code admin} grants every operation. */
public enum Permission {
  INFERENCE,
  TRAINING,
  MODELS,
  ADMIN;

  public String wireName() {
    return name().toLowerCase(Locale.ROOT);
  }

  public static Optional<Permission> fromWire(String value) {
    return Arrays.stream(values()).filter(p -> p.wireName().equals(value)).findFirst();
  }

  public static String allWireNames() {
    return Arrays.stream(values()).map(Permission::wireName).collect(Collectors.joining(", "));
  }
}
