package io.engram.organizations;

import java.util.Locale;
import java.util.Optional;

/**
 * Operational tiers, in order: a capability's {@code tierRequirement} is met by its tier and every
 * tier after it. Plan ids normalize into these (see {@link Plan}).
 */
public enum Tier {
  FREE,
  SPARK,
  SEED,
  RISE,
  GROWTH,
  BOOST,
  SCALE,
  GROW,
  EXPAND,
  PRIME,
  PUBLIC,
  ELITE,
  TITAN,
  GOD,
  DEDICATED;

  public String id() {
    return name().toLowerCase(Locale.ROOT);
  }

  public boolean atLeast(Tier other) {
    return compareTo(other) >= 0;
  }

  public static Optional<Tier> fromId(String id) {
    for (Tier tier : values()) {
      if (tier.id().equalsIgnoreCase(id == null ? "" : id.trim())) {
        return Optional.of(tier);
      }
    }
    return Optional.empty();
  }
}
