package io.engram.guardrails;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.platform.json.Json;
import java.util.List;

/** Guardrails as the API shows them, and as their spec is stored. */
final class GuardrailViews {
  private GuardrailViews() {}

  /** What a client wrote, as stored and as merged with a PATCH. */
  static ObjectNode spec(GuardrailSpec written) {
    ObjectNode spec = Json.MAPPER.createObjectNode().put("name", written.name());
    ArrayNode phases = spec.putArray("applies_to");
    for (Phase phase : Phase.values()) {
      if (written.appliesTo().contains(phase)) {
        phases.add(phase.id());
      }
    }
    Check check = written.check();
    ObjectNode checked = spec.putObject("check").put("type", check.type());
    switch (check) {
      case Check.Pii pii -> strings(checked.putArray("entities"), pii.entities());
      case Check.Terms terms -> strings(checked.putArray("terms"), terms.terms());
      case Check.Regex regex -> strings(checked.putArray("patterns"), regex.patterns());
      case Check.Secrets secrets -> {}
      case Check.PromptInjection injection -> {}
      case Check.JsonSchema schema -> checked.set("schema", schema.schema().deepCopy());
      case Check.Webhook webhook ->
        checked
            .put("url", webhook.url().toString())
            .put("timeout_ms", webhook.timeoutMs())
            .put("on_error", webhook.blockOnError() ? "block" : "allow");
    }
    spec.put("action", written.action().id()).put("restore", written.restore());
    GuardrailScope scope = written.scope();
    ObjectNode scoped = spec.putObject("scope");
    strings(scoped.putArray("api_keys"), scope.apiKeys());
    strings(scoped.putArray("tokens"), scope.tokens());
    strings(scoped.putArray("assistants"), scope.assistants());
    strings(scoped.putArray("models"), scope.models());
    return spec.put("enabled", written.enabled());
  }

  static ObjectNode view(Guardrail guardrail) {
    ObjectNode view =
        Json.MAPPER.createObjectNode().put("id", guardrail.id()).put("object", "guardrail");
    view.setAll(spec(guardrail.spec()));
    return view.put("created_at", guardrail.createdAt() / 1000)
        .put("updated_at", guardrail.updatedAt() / 1000);
  }

  /** A preview: per phase, each guardrail that fired, the one that blocks, the text as let on. */
  static ObjectNode preview(List<Guardrails.Preview> previews) {
    ObjectNode view = Json.MAPPER.createObjectNode().put("object", "guardrail_preview");
    ArrayNode phases = view.putArray("phases");
    for (Guardrails.Preview preview : previews) {
      Screening screened = preview.screening();
      ObjectNode phase = phases.addObject().put("phase", preview.phase().id());
      ArrayNode fired = phase.putArray("fired");
      for (Screening.Firing firing : screened.firings()) {
        ObjectNode one = fired
            .addObject()
            .put("guardrail_id", firing.guardrail().id())
            .put("name", firing.guardrail().name())
            .put("action", firing.action().id());
        strings(one.putArray("kinds"), List.copyOf(firing.kinds()));
      }
      phase.put(
          "blocked_by", screened.blocked() ? screened.blockedBy().guardrail().id() : null);
      phase.put("text", screened.blocked() ? null : screened.texts().get(0));
    }
    return view;
  }

  private static void strings(ArrayNode into, List<String> values) {
    values.forEach(into::add);
  }
}
