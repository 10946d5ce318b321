package io.engram.inference.call;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.access.Principal;
import io.engram.guardrails.Action;
import io.engram.guardrails.AnswerScreen;
import io.engram.guardrails.Guardrails;
import io.engram.guardrails.Phase;
import io.engram.guardrails.Screening;
import io.engram.inference.engine.ChatMessage;
import io.engram.inference.engine.Engine;
import io.engram.inference.engine.Generation;
import io.engram.inference.engine.GenerationRequest;
import io.engram.platform.http.ApiException;
import java.util.ArrayList;
import java.util.List;

/**
 * The organization's input and output guardrails around a call.
 *
 * <p>Input, before the memory block is retrieved and before any provider sees the request: a
 * block refuses the call (400 {@code guardrail_blocked}, nothing sent, nothing charged: the
 * admission is given back), a redaction replaces what it found by typed placeholders in every
 * message (and in each text part of a message sent as parts), a flag lets it through. An
 * assistant's later steps are screened too, their new messages (tool results) only. Injection
 * checks read only what is not the user's own turn (tool results).
 *
 * <p>Output, between the engine (or the cache) and the client: the answer's text through an
 * {@link AnswerScreen} (streamed, held back no more than the guardrails need), and its tool calls'
 * arguments once they are whole. A block ends the call with {@code guardrail_blocked} (a streamed
 * answer with one error event) while the tokens the provider produced are charged; a redaction
 * replaces what it found before the client, the log or the history see it. Each firing is kept on
 * the call for the response's header, the request log and the trace.
 */
final class GuardrailStage implements Stage {
  private static final Generation.Usage NOTHING = new Generation.Usage(0, 0);

  private final Guardrails guardrails;

  GuardrailStage(Guardrails guardrails) {
    this.guardrails = guardrails;
  }

  @Override
  public void prepare(ModelCall call) {
    if (call.request() == null) {
      return;
    }
    if (call.request().relaysChoices()
        && guardrails.any(call.caller().orgId(), Phase.OUTPUT)
        && guardrails.answer(call.caller().orgId(), who(call), call.placeholders()) != null) {
      // Several choices, or log probabilities that spell the answer's tokens, would pass around
      // the answer's screen: refused by name rather than let through unscreened.
      String field = call.request().tooling().has("logprobs") ? "logprobs" : "n";
      throw ApiException.invalid(
          "unsupported_parameter",
          field,
          "'" + field + "' cannot be used where the organization's output guardrails screen the"
              + " answer");
    }
    Screening screened = screenInput(call);
    if (screened != null && screened.blocked()) {
      throw Guardrails.blocked(screened.blockedBy());
    }
  }

  @Override
  public Ended intercept(Chain chain) {
    ModelCall call = chain.call();
    if (call.request() == null) {
      return chain.proceed(chain.sink());
    }
    Screening step = screenInput(call); // an assistant's later step: its new messages
    if (step != null && step.blocked()) {
      return Ended.failed(
          Guardrails.blocked(step.blockedBy()),
          NOTHING,
          0,
          Ended.EngineRun.endingNow("", 0, System.nanoTime(), 0));
    }
    AnswerScreen screen = guardrails.answer(call.caller().orgId(), who(call), call.placeholders());
    if (screen == null) {
      return chain.proceed(chain.sink());
    }
    ScreenedSink sink = new ScreenedSink(chain.sink(), screen, call.request().stream());
    Ended ended = chain.proceed(sink);
    if (ended.outcome() == null) {
      call.fired(screen.firings());
      return ended;
    }
    Generation generation = ended.outcome().generation();
    String text = sink.finish(generation.text());
    JsonNode toolCalls = text == null ? null : screenedCalls(call, generation, sink);
    call.fired(screen.firings());
    if (text == null || sink.blockedBy != null) {
      Screening.Firing by = text == null ? screen.blockedBy() : sink.blockedBy;
      return Ended.failed(Guardrails.blocked(by), ended.charged(), ended.costNanos(), ended.run());
    }
    sink.deliverHeldCalls();
    if (generation.text() == null && text.isEmpty()) {
      text = null; // an answer of tool calls only stays one
    }
    Generation screened = new Generation(
        text, generation.finishReason(), generation.usage(), toolCalls, generation.choices());
    return new Ended(
        ended.kind(),
        new Outcome(screened, ended.outcome().usage()),
        ended.embeddings(),
        ended.charged(),
        ended.costNanos(),
        ended.run(),
        null);
  }

  /**
   * The tool calls' arguments through the output guardrails once whole (a streamed answer's were
   * held back until now): redacted in place, or a block.
   */
  private JsonNode screenedCalls(ModelCall call, Generation generation, ScreenedSink sink) {
    JsonNode calls = call.request().stream() ? sink.heldCalls() : generation.toolCalls();
    if (calls == null || calls.isEmpty()) {
      return generation.toolCalls();
    }
    List<Screening.Text> arguments = new ArrayList<>();
    calls.forEach(c ->
        arguments.add(new Screening.Text(c.path("function").path("arguments").asText(""), false)));
    Screening screened = guardrails.screen(
        call.caller().orgId(), Phase.OUTPUT, who(call), arguments, call.placeholders());
    call.fired(screened.firings());
    if (screened.blocked()) {
      sink.blockedBy = screened.blockedBy();
      return null;
    }
    ArrayNode redacted = calls.deepCopy() instanceof ArrayNode copy ? copy : null;
    for (int i = 0; redacted != null && i < redacted.size(); i++) {
      JsonNode function = redacted.get(i).get("function");
      if (function instanceof ObjectNode named) {
        named.put("arguments", screened.texts().get(i));
      }
    }
    if (call.request().stream()) {
      sink.heldCallsScreened(redacted);
      return generation.toolCalls();
    }
    return redacted;
  }

  /** Who the call is, as a guardrail's scope reads it. */
  static Guardrails.Who who(ModelCall call) {
    Principal caller = call.caller();
    return new Guardrails.Who(
        caller.credentialId(),
        caller.kind() == Principal.Kind.API_KEY,
        call.origin().assistantId(),
        call.modelId());
  }

  /**
   * The input guardrails over the messages of the call they have not seen yet (all of them when
   * it is prepared, a step's new ones after); null when none covers the call.
   */
  private Screening screenInput(ModelCall call) {
    GenerationRequest request = call.request();
    int from = call.screenedMessages();
    int count = request.isChat() ? request.messages().size() : 1;
    if (from >= count || !guardrails.any(call.caller().orgId(), Phase.INPUT)) {
      call.screenedAll();
      return null;
    }
    List<Screening.Text> texts = new ArrayList<>();
    if (request.isChat()) {
      for (ChatMessage message : request.messages().subList(from, count)) {
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
    Screening screened = guardrails.screen(
        call.caller().orgId(), Phase.INPUT, who(call), texts, call.placeholders());
    call.screenedAll();
    if (screened.fired()) {
      // Only a redaction changes the request; flags leave it as sent.
      boolean redacts = screened.firings().stream().anyMatch(f -> f.action() == Action.REDACT);
      call.screened(
          screened.firings(), redacts ? redacted(request, from, screened.texts()) : request);
    }
    return screened;
  }

  /** The request with each text from message {@code from} on as screened, in reading order. */
  private static GenerationRequest redacted(
      GenerationRequest request, int from, List<String> texts) {
    if (!request.isChat()) {
      return request.withPrompt(texts.get(0));
    }
    List<ChatMessage> messages = new ArrayList<>(request.messages().subList(0, from));
    int next = 0;
    for (ChatMessage message :
        request.messages().subList(from, request.messages().size())) {
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
