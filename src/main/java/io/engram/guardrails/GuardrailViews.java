package io.engram.guardrails;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.platform.json.Json;
import java.util.List;

/** Guardrails as the API shows them, and as their spec is stored. */
final class GuardrailViews {
  private GuardrailViews() {}

  /** What a client wrote, as stored and as merged with a PATCH. */
  static ObjectNode spec(
      String name,
      java.util.Set<Phase> appliesTo,
      Check check,
      Action action,
      boolean restore,
      GuardrailScope scope,
      boolean enabled) {
    ObjectNode spec = Json.MAPPER.createObjectNode().put("name", name);
    ArrayNode phases = spec.putArray("applies_to");
    for (Phase phase : Phase.values()) {
      if (appliesTo.contains(phase)) {
        phases.add(phase.id());
      }
    }
    ObjectNode written = spec.putObject("check").put("type", check.type());
    switch (check) {
      case Check.Pii pii -> strings(written.putArray("entities"), pii.entities());
      case Check.Terms terms -> strings(written.putArray("terms"), terms.terms());
      case Check.Regex regex -> strings(written.putArray("patterns"), regex.patterns());
      case Check.Secrets secrets -> {}
      case Check.PromptInjection injection -> {}
    }
    spec.put("action", action.id()).put("restore", restore);
    ObjectNode scoped = spec.putObject("scope");
    strings(scoped.putArray("api_keys"), scope.apiKeys());
    strings(scoped.putArray("tokens"), scope.tokens());
    strings(scoped.putArray("assistants"), scope.assistants());
    strings(scoped.putArray("models"), scope.models());
    return spec.put("enabled", enabled);
  }

  static ObjectNode spec(GuardrailSpec spec) {
    return spec(
        spec.name(),
        spec.appliesTo(),
        spec.check(),
        spec.action(),
        spec.restore(),
        spec.scope(),
        spec.enabled());
  }

  static ObjectNode spec(Guardrail guardrail) {
    return spec(
        guardrail.name(),
        guardrail.appliesTo(),
        guardrail.check(),
        guardrail.action(),
        guardrail.restore(),
        guardrail.scope(),
        guardrail.enabled());
  }

  static ObjectNode view(Guardrail guardrail) {
    ObjectNode view =
        Json.MAPPER.createObjectNode().put("id", guardrail.id()).put("object", "guardrail");
    view.setAll(spec(guardrail));
    return view.put("created_at", guardrail.createdAt() / 1000)
        .put("updated_at", guardrail.updatedAt() / 1000);
  }

  private static void strings(ArrayNode into, List<String> values) {
    values.forEach(into::add);
  }
}
