package io.engram.alerts;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;

/**
 * The spec's eight monitoring alerts, and five of Engram's own (certificate expiry, a provider
 * misconfigured, a budget at 80 % and at 100 % of its limit, a guardrail's block). Each is evaluated from a measurement the server takes
 * ({@link AlertRules}); those whose measurement belongs to instance storage (IOPS, backups,
 * retention) fire once that storage exists.
 */
public enum AlertKind {
  BANDWIDTH,
  CONNECTIONS,
  ERROR_RATE,
  UNUSUAL_TRAFFIC,
  STORAGE,
  IOPS,
  BACKUP_FAILED,
  RETENTION_VIOLATION,
  /** Engram's own: a certificate of the organization expires within 14 days (docs/network.md). */
  CERTIFICATE_EXPIRING,
  /**
   * Engram's own: a provider refused the gateway's key or does not know a deployment's model, an
   * operator problem (docs/inference.md); resolved when the deployment answers again.
   */
  PROVIDER_MISCONFIGURED,
  /** Engram's own: a budget of the organization has spent 80 % of its limit (docs/budgets.md). */
  BUDGET_NEARLY_SPENT,
  /** Engram's own: a budget of the organization has spent its limit; requests it covers fail. */
  BUDGET_SPENT,
  /**
   * Engram's own: one of the organization's guardrails blocked a request, an answer or a memory
   * (docs/guardrails.md); told at most once an hour per guardrail, resolved an hour after the last.
   */
  GUARDRAIL_BLOCKED;

  public String id() {
    return name().toLowerCase(Locale.ROOT);
  }

  public static Optional<AlertKind> fromId(String id) {
    return Arrays.stream(values()).filter(k -> k.id().equals(id)).findFirst();
  }
}
