package io.engram.budgets;

import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;

/**
 * A limit on what one organization, one of its credentials or one of its assistants may spend in a
 * UTC day or month, in billionths of a US dollar (the unit of the models' prices).
 *
 * @param scopeId '' for the organization, else the credential's or the assistant's id
 */
public record Budget(
    String id,
    String orgId,
    Scope scope,
    String scopeId,
    Period period,
    long limitNanos,
    long createdAt,
    String createdBy) {

  /** Whose requests a budget counts. */
  public enum Scope {
    ORGANIZATION,
    /** One API key or context access token (its id). */
    KEY,
    /** Conversations as one assistant ({@code /v1/assistants/{id}/chat/completions}). */
    ASSISTANT;

    public String id() {
      return name().toLowerCase(Locale.ROOT);
    }

    static Optional<Scope> fromId(String id) {
      return Arrays.stream(values()).filter(s -> s.id().equals(id)).findFirst();
    }

    /** The id a spender's request is counted under in this scope, or null when it has none. */
    String of(Spender spender) {
      return switch (this) {
        case ORGANIZATION -> "";
        case KEY -> spender.credentialId();
        case ASSISTANT -> spender.assistantId();
      };
    }
  }

  /** The UTC calendar period a budget renews on. */
  public enum Period {
    DAY,
    MONTH;

    public String id() {
      return name().toLowerCase(Locale.ROOT);
    }

    static Optional<Period> fromId(String id) {
      return Arrays.stream(values()).filter(p -> p.id().equals(id)).findFirst();
    }

    /** The start of the period holding {@code epochMillis}, in epoch milliseconds. */
    long start(long epochMillis) {
      LocalDate day = Instant.ofEpochMilli(epochMillis).atZone(ZoneOffset.UTC).toLocalDate();
      LocalDate first = this == DAY ? day : day.withDayOfMonth(1);
      return first.atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
    }

    /** The start of the next period after {@code epochMillis}'s, when the budget renews. */
    long end(long epochMillis) {
      LocalDate first =
          Instant.ofEpochMilli(start(epochMillis)).atZone(ZoneOffset.UTC).toLocalDate();
      LocalDate next = this == DAY ? first.plusDays(1) : first.plusMonths(1);
      return next.atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
    }
  }

  /** Whether the spender's requests count against this budget. */
  boolean covers(Spender spender) {
    return scopeId.equals(scope.of(spender));
  }

  /** The counter this budget's spend in the period holding {@code epochMillis} is kept in. */
  Counter counter(long epochMillis) {
    return new Counter(orgId, scope, scopeId, period, period.start(epochMillis));
  }
}
