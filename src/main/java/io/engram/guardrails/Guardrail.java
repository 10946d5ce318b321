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

  public static Guardrail of(
      String id, String orgId, GuardrailSpec spec, long createdAt, long updatedAt) {
    return new Guardrail(id, orgId, spec, createdAt, updatedAt, spec.check().detector());
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
