package io.engram.guardrails;

import io.engram.guardrails.detect.Detector;
import java.util.Set;

/**
 * An organization's policy on what flows through it, as written ({@link GuardrailSpec}: where it
 * looks, what it looks for, what it does when it fires, whose requests it covers, whether it is
 * on), with its id and times. Its detector is built once, when the guardrail is read.
 */
public record Guardrail(
    String id,
    String orgId,
    GuardrailSpec spec,
    long createdAt,
    long updatedAt,
    Detector detector) {

  /** A guardrail whose check runs in process (every type but webhook). */
  public static Guardrail of(
      String id, String orgId, GuardrailSpec spec, long createdAt, long updatedAt) {
    return new Guardrail(id, orgId, spec, createdAt, updatedAt, spec.check().detector());
  }

  /** A guardrail of any type: a webhook's check calls out through {@code webhooks}. */
  static Guardrail of(
      String id,
      String orgId,
      GuardrailSpec spec,
      long createdAt,
      long updatedAt,
      Webhooks webhooks) {
    Detector detector = spec.check() instanceof Check.Webhook webhook
        ? webhooks.detector(id, orgId, webhook)
        : spec.check().detector();
    return new Guardrail(id, orgId, spec, createdAt, updatedAt, detector);
  }

  public String name() {
    return spec.name();
  }

  public Set<Phase> appliesTo() {
    return spec.appliesTo();
  }

  public Check check() {
    return spec.check();
  }

  public Action action() {
    return spec.action();
  }

  public GuardrailScope scope() {
    return spec.scope();
  }

  public boolean enabled() {
    return spec.enabled();
  }
}
