package io.engram.organizations;

import java.util.Locale;
import java.util.Optional;

/** A user's role inside an organization. Owners and admins manage it; members use it. */
public enum Role {
  OWNER,
  ADMIN,
  MEMBER;

  public String id() {
    return name().toLowerCase(Locale.ROOT);
  }

  public static Optional<Role> fromId(String id) {
    for (Role role : values()) {
      if (role.id().equalsIgnoreCase(id == null ? "" : id.trim())) {
        return Optional.of(role);
      }
    }
    return Optional.empty();
  }
}
