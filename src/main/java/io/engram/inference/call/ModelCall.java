package io.engram.inference.call;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.access.Principal;
import io.engram.guardrails.Placeholders;
import io.engram.guardrails.Screening;
import io.engram.inference.engine.ChatMessage;
import io.engram.inference.engine.GenerationRequest;
import io.engram.inference.engine.Sampling;
import io.engram.inference.models.ModelCatalog;
import io.engram.inference.usage.InferenceLimits;
import io.engram.memory.AgentScope;
import io.engram.platform.json.Json;
import io.engram.settings.EffectiveConfig;
import java.util.ArrayList;
import java.util.List;

/**
 * A model call admitted and ready for its engine: a chat, a completion or embeddings, holding a
 * concurrency slot until {@link #close()}. The gateway prepares and admits it; its stages fill in
 * the memory block and the cache's verdict before its answer begins, and nothing changes it after.
 */
public final class ModelCall implements AutoCloseable {
  public enum Kind {
    CHAT,
    COMPLETION,
    EMBEDDINGS
  }

  /** A call let in: its longest reply (max_tokens, or what the defaults allow), its permit. */
  public record Admission(long longestReply, InferenceLimits.Permit permit) {}

  /**
   * What the memory stage is asked to find for a chat: in which boundary, at most how many
   * memories, within how many tokens of the context (before the hour's budget has its say), and
   * above which relevance.
   */
  public record MemoryAsk(AgentScope scope, int limit, int room, double floor) {}

  private final Kind kind;
  private final Principal caller;
  private final EffectiveConfig config;
  private final ModelCatalog.Entry model;
  private final String modelId;
  private final Sampling asked;
  private final Admission admission;
  private final String requestId;
  private final Origin origin;
  private final MemoryAsk memoryAsk;
  private final CacheMode cacheMode;
  private GenerationRequest request;
  private int promptTokens;
  private MemoryContext.Injection memory = MemoryContext.Injection.NONE;
  private Caching cache = Caching.OFF;
  private final List<Screening.Firing> guardrails = new ArrayList<>();
  private final List<String> leftOut = new ArrayList<>();
  /** The conversation's placeholders: one numbering across its steps and its answer. */
  private Placeholders placeholders = new Placeholders();
  /** How many of the request's messages the input guardrails have seen (a step's are new). */
  private int screenedMessages;

  private String sent;

  private ModelCall(
      Kind kind,
      Principal caller,
      EffectiveConfig config,
      ModelCatalog.Entry model,
      String modelId,
      GenerationRequest request,
      int promptTokens,
      Admission admission,
      String requestId,
      Origin origin,
      MemoryAsk memoryAsk,
      CacheMode cacheMode) {
    this.kind = kind;
    this.caller = caller;
    this.config = config;
    this.model = model;
    this.modelId = modelId;
    this.asked = request == null ? null : request.sampling();
    this.admission = admission;
    this.requestId = requestId;
    this.origin = origin;
    this.memoryAsk = memoryAsk;
    this.cacheMode = cacheMode;
    this.promptTokens = promptTokens;
    this.request = request == null ? null : request.withSampling(resolved(promptTokens));
  }

  /**
   * A chat or completion; {@code request} holds the sampling as the client sent it ({@code
   * max_tokens} is filled in here, and again once memory took its part of the context). {@code
   * config} is the organization's in force (null: the caller has none), looked up once a call.
   */
  public static ModelCall generation(
      Principal caller,
      EffectiveConfig config,
      ModelCatalog.Entry model,
      GenerationRequest request,
      int promptTokens,
      Admission admission,
      String requestId,
      Origin origin,
      MemoryAsk memoryAsk,
      CacheMode cacheMode) {
    return new ModelCall(
        request.isChat() ? Kind.CHAT : Kind.COMPLETION,
        caller,
        config,
        model,
        model.card().id(),
        request,
        promptTokens,
        admission,
        requestId,
        origin,
        memoryAsk,
        cacheMode);
  }

  /** Embeddings of {@code promptTokens} tokens on {@code model} (null: the in-process model). */
  public static ModelCall embeddings(
      Principal caller,
      EffectiveConfig config,
      ModelCatalog.Entry model,
      String modelId,
      int promptTokens,
      InferenceLimits.Permit permit,
      String requestId,
      Origin origin) {
    return new ModelCall(
        Kind.EMBEDDINGS,
        caller,
        config,
        model,
        modelId,
        null,
        promptTokens,
        new Admission(0, permit),
        requestId,
        origin,
        null,
        CacheMode.OFF);
  }

  /**
   * The same conversation one step on: the model's turn and what answers it (tool results)
   * appended, with the same model, memory, concurrency slot and reply limit. Admission was paid
   * once, for the conversation; each step's usage is recorded when it runs. The context must still
   * hold the grown prompt and the reply (400 context_length_exceeded otherwise). {@code tooling}
   * is the step's (the last step of a long conversation offers no more calls).
   */
  public ModelCall continued(List<ChatMessage> added, ObjectNode tooling) {
    List<ChatMessage> messages = new ArrayList<>(request.messages());
    messages.addAll(added);
    int grown = promptTokens + PromptTokens.chat(added) - PromptTokens.FOR_REPLY;
    PromptTokens.checkContext(
        grown + request.sampling().maxTokens(), model.card().contextLength());
    ModelCall next = new ModelCall(
        kind,
        caller,
        config,
        model,
        modelId,
        request.withMessages(List.copyOf(messages), tooling),
        grown,
        admission,
        requestId,
        origin.next(),
        null,
        CacheMode.OFF);
    next.memory = memory;
    next.placeholders = placeholders;
    next.screenedMessages = request.messages().size();
    return next;
  }

  /**
   * Puts the memory block ahead of the conversation; the reply's room is what the context has
   * left once it is in (when the client did not set max_tokens).
   */
  void inject(MemoryContext.Injection injection) {
    memory = injection;
    if (injection.isEmpty()) {
      return;
    }
    promptTokens += injection.tokens() + PromptTokens.PER_MESSAGE;
    request = request
        .withMessages(injection.applyTo(request.messages()), request.tooling())
        .withSampling(resolved(promptTokens));
  }

  /** What the input's guardrails fired, and the input as they let it go on. */
  void screened(List<Screening.Firing> fired, GenerationRequest input) {
    fired(fired);
    request = input;
  }

  /** The input guardrails have seen every message the call holds now. */
  void screenedAll() {
    screenedMessages = request.isChat() ? request.messages().size() : 1;
  }

  /** How many of the request's messages the input guardrails have seen. */
  int screenedMessages() {
    return screenedMessages;
  }

  /**
   * Guardrails that fired on the call, in any phase: one that fires again (on another memory, in
   * another piece) adds the kinds it found to its firing.
   */
  synchronized void fired(List<Screening.Firing> fired) {
    for (Screening.Firing firing : fired) {
      int same = -1;
      for (int i = 0; i < guardrails.size(); i++) {
        Screening.Firing kept = guardrails.get(i);
        if (kept.guardrail().id().equals(firing.guardrail().id())
            && kept.phase() == firing.phase()) {
          same = i;
        }
      }
      if (same < 0) {
        guardrails.add(firing);
      } else {
        java.util.Set<String> kinds =
            new java.util.TreeSet<>(guardrails.get(same).kinds());
        kinds.addAll(firing.kinds());
        guardrails.set(same, new Screening.Firing(firing.guardrail(), firing.phase(), kinds));
      }
    }
  }

  /** A memory the memory_injection guardrails left out of the chat. */
  synchronized void leftOut(String memoryId) {
    leftOut.add(memoryId);
  }

  /** The guardrails that fired on this call so far (the X-Engram-Guardrails header, the log). */
  public synchronized List<Screening.Firing> guardrails() {
    return List.copyOf(guardrails);
  }

  /** The memories the memory_injection guardrails left out (the request log lists them). */
  public synchronized List<String> leftOutMemories() {
    return List.copyOf(leftOut);
  }

  /** The conversation's placeholders: what its redactions made, and what they may give back. */
  public Placeholders placeholders() {
    return placeholders;
  }

  void cache(Caching caching) {
    this.cache = caching;
  }

  /**
   * max_tokens as sent, or, left out: the spec's 2048 within the plan and the context (the
   * admission's longest reply), what the context leaves after the prompt, and what the hour's
   * token budget granted the call.
   */
  private Sampling resolved(int prompt) {
    if (asked.maxTokens() != null) {
      return asked;
    }
    long max = Math.min(admission.longestReply(), model.card().contextLength() - prompt);
    max = Math.min(max, admission.permit().replyAllowance());
    return asked.withMaxTokens((int) Math.max(1, max));
  }

  public Kind kind() {
    return kind;
  }

  public Principal caller() {
    return caller;
  }

  /** The caller's organization's settings in force (null: a caller without an organization). */
  public EffectiveConfig config() {
    return config;
  }

  /** The model as served (null only for embeddings on the in-process model). */
  public ModelCatalog.Entry model() {
    return model;
  }

  /** The model's id as the client knows it. */
  public String modelId() {
    return modelId;
  }

  public ModelCatalog.Pricing pricing() {
    return model == null ? ModelCatalog.Pricing.NONE : model.pricing();
  }

  /** What the engine is asked (null for embeddings). */
  public GenerationRequest request() {
    return request;
  }

  public int promptTokens() {
    return promptTokens;
  }

  public InferenceLimits.Permit permit() {
    return admission.permit();
  }

  /** The hour's token budget after this call's reservation; null when the plan has none. */
  public InferenceLimits.TokenBudget budget() {
    return admission.permit().budget();
  }

  public String requestId() {
    return requestId;
  }

  public Origin origin() {
    return origin;
  }

  MemoryAsk memoryAsk() {
    return memoryAsk;
  }

  CacheMode cacheMode() {
    return cacheMode;
  }

  public MemoryContext.Injection memory() {
    return memory;
  }

  public Caching cache() {
    return cache;
  }

  public List<String> memoryIds() {
    return memory.memoryIds();
  }

  public int memoryTokens() {
    return memory.tokens();
  }

  /** Whether memory was asked for but its index could not be reached (the chat went on without). */
  public boolean memoryUnavailable() {
    return memory.unavailable();
  }

  /**
   * The client's messages (not the memory block Engram added) or prompt, as JSON: written once a
   * call, for the history, the request log and the trace that keep it.
   */
  String sent() {
    if (sent == null && request != null) {
      List<ChatMessage> messages = request.isChat()
          ? request.messages()
          : List.of(new ChatMessage(ChatMessage.USER, request.prompt()));
      // In the client's own shape (role, content, tool fields), not the gateway's record.
      sent = Json.write(
          (memory.isEmpty() || !request.isChat() ? messages : messages.subList(1, messages.size()))
              .stream().map(ChatMessage::toJson).toList());
    }
    return sent;
  }

  @Override
  public void close() {
    admission.permit().close();
  }
}
