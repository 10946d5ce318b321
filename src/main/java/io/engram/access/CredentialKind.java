package io.engram.access;

import java.util.Locale;
import java.util.Optional;

/**
 * The credentials Engram issues, each with its fixed prefix. Signed-in sessions use
 * {@code engs_} secrets but live in their own table (see {@link SessionService}).
 */
public enum CredentialKind {
  /** Organization-level memory and inference token with scopes, optionally bound to agents. */
  CONTEXT_TOKEN("engc"),
  /** Instance API key with permissions and a per-key rate limit. */
  API_KEY("engk"),
  /** Operator key that creates organizations and their keys. */
  ACCOUNT_KEY("enga");

  private final String prefix;

  CredentialKind(String prefix) {
    this.prefix = prefix;
  }

  public String prefix() {
    return prefix;
  }

  public String id() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The kind whose prefix starts this secret, if any. */
  public static Optional<CredentialKind> ofSecret(String secret) {
    for (CredentialKind kind : values()) {
      if (secret.startsWith(kind.prefix + "_")) {
        return Optional.of(kind);
      }
    }
    return Optional.empty();
  }

  /** The prefix of the id of a stored credential of this kind. */
  public String idPrefix() {
    return switch (this) {
      case CONTEXT_TOKEN -> "tok";
      case API_KEY -> "key";
      case ACCOUNT_KEY -> "acct";
    };
  }
}
