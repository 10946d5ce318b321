package io.engram.guardrails;

import io.engram.guardrails.detect.Detector;
import java.util.Set;

/**
 * An organization's policy on what flows through it: where it looks ({@code appliesTo}), what it
 * looks for ({@code check}), what it does when it fires ({@code action}; with {@code restore} a
 * redaction is undone in the answer the client gets), whose requests it covers, and whether it is
 * on. Its detector is built once, when the guardrail is read.
 */
public record Guardrail(
    String id,
    String orgId,
    String name,
    Set<Phase> appliesTo,
    Check check,
    Action action,
    boolean restore,
    GuardrailScope scope,
    boolean enabled,
    long createdAt,
    long updatedAt,
    Detector detector) {

  public Guardrail {
    appliesTo = Set.copyOf(appliesTo);
  }

  /** The same guardrail, its detector built from its check. */
  public static Guardrail of(
      String id,
      String orgId,
      String name,
      Set<Phase> appliesTo,
      Check check,
      Action action,
      boolean restore,
      GuardrailScope scope,
      boolean enabled,
      long createdAt,
      long updatedAt) {
    return new Guardrail(
        id,
        orgId,
        name,
        appliesTo,
        check,
        action,
        restore,
        scope,
        enabled,
        createdAt,
        updatedAt,
        check.detector());
  }
}
