package io.engram.inference.call;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.access.Principal;
import io.engram.guardrails.Guardrails;
import io.engram.guardrails.Phase;
import io.engram.guardrails.Screening;
import io.engram.inference.engine.ChatMessage;
import io.engram.inference.engine.Engine;
import io.engram.inference.engine.GenerationRequest;
import java.util.ArrayList;
import java.util.List;

/**
 * The organization's input guardrails, before the memory block is retrieved and before any
 * provider sees the request: a block refuses the call (400 {@code guardrail_blocked}, nothing
 * sent, nothing charged: the admission is given back), a redaction replaces what it found by
 * typed placeholders in every message (and in each text part of a message sent as parts), a flag
 * lets it through; each firing is on the call for the response's header and the request log.
 * Injection checks read only what is not the user's own turn (tool results).
 */
final class GuardrailStage implements Stage {
  private final Guardrails guardrails;

  GuardrailStage(Guardrails guardrails) {
    this.guardrails = guardrails;
  }

  @Override
  public void prepare(ModelCall call) {
    Principal caller = call.caller();
    GenerationRequest request = call.request();
    if (request == null || !guardrails.any(caller.orgId(), Phase.INPUT)) {
      return;
    }
    Guardrails.Who who = new Guardrails.Who(
        caller.credentialId(),
        caller.kind() == Principal.Kind.API_KEY,
        call.origin().assistantId(),
        call.modelId());
    List<Screening.Text> texts = new ArrayList<>();
    if (request.isChat()) {
      for (ChatMessage message : request.messages()) {
        boolean own = !ChatMessage.TOOL.equals(message.role());
        ArrayNode parts = parts(message);
        if (parts == null) {
          texts.add(new Screening.Text(message.content() == null ? "" : message.content(), own));
        } else {
          textParts(parts)
              .forEach(part -> texts.add(new Screening.Text(part.path("text").asText(), own)));
        }
      }
    } else {
      texts.add(new Screening.Text(request.prompt(), true));
    }
    Screening screened = guardrails.screen(caller.orgId(), Phase.INPUT, who, texts);
    if (screened.blocked()) {
      throw Guardrails.blocked(screened.blockedBy());
    }
    if (screened.fired()) {
      // Only a redaction changes the request; flags leave it as sent.
      boolean redacts = screened.firings().stream()
          .anyMatch(f -> f.action() == io.engram.guardrails.Action.REDACT);
      call.screened(screened.firings(), redacts ? redacted(request, screened.texts()) : request);
    }
  }

  /** The request with each text as screened, in the order they were read. */
  private static GenerationRequest redacted(GenerationRequest request, List<String> texts) {
    if (!request.isChat()) {
      return request.withPrompt(texts.get(0));
    }
    List<ChatMessage> messages = new ArrayList<>();
    int next = 0;
    for (ChatMessage message : request.messages()) {
      ArrayNode parts = parts(message);
      if (parts == null) {
        String text = texts.get(next++);
        messages.add(new ChatMessage(
            message.role(), message.content() == null ? null : text, message.tooling()));
        continue;
      }
      ObjectNode tooling = message.tooling().deepCopy();
      StringBuilder content = new StringBuilder();
      for (JsonNode part : textParts((ArrayNode) tooling.get(Engine.PARTS))) {
        String text = texts.get(next++);
        ((ObjectNode) part).put("text", text);
        content.append(text); // the parts' texts joined as the message's text is (ChatRequest)
      }
      messages.add(new ChatMessage(message.role(), content.toString(), tooling));
    }
    return request.withMessages(List.copyOf(messages), request.tooling());
  }

  private static ArrayNode parts(ChatMessage message) {
    JsonNode parts = message.tooling() == null ? null : message.tooling().get(Engine.PARTS);
    return parts instanceof ArrayNode array ? array : null;
  }

  private static List<JsonNode> textParts(ArrayNode parts) {
    List<JsonNode> texts = new ArrayList<>();
    parts.forEach(part -> {
      if ("text".equals(part.path("type").asText())) {
        texts.add(part);
      }
    });
    return texts;
  }
}
