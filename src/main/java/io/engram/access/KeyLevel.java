package io.engram.access;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The dashboard's levels for a new API key (the spec: "the dashboard offers read, write and
 * admin"), each a fixed set of the key permissions: {@code read} runs and lists models
 * (inference), {@code write} also trains and uploads them (training, models), {@code admin} is
 * every operation.
 */
public enum KeyLevel {
  READ(EnumSet.of(Permission.INFERENCE)),
  WRITE(EnumSet.of(Permission.INFERENCE, Permission.TRAINING, Permission.MODELS)),
  ADMIN(EnumSet.of(Permission.ADMIN));

  private final Set<Permission> permissions;

  KeyLevel(Set<Permission> permissions) {
    this.permissions = permissions;
  }

  public Set<Permission> permissions() {
    return permissions;
  }

  public String wireName() {
    return name().toLowerCase(Locale.ROOT);
  }

  public static Optional<KeyLevel> fromWire(String value) {
    return Arrays.stream(values()).filter(l -> l.wireName().equals(value)).findFirst();
  }

  public static String allWireNames() {
    return Arrays.stream(values()).map(KeyLevel::wireName).collect(Collectors.joining(", "));
  }
}
