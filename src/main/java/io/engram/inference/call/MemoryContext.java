package io.engram.inference.call;

import io.engram.access.Principal;
import io.engram.guardrails.Guardrails;
import io.engram.guardrails.Phase;
import io.engram.guardrails.Screening;
import io.engram.inference.engine.ChatMessage;
import io.engram.inference.usage.RequestRecord;
import io.engram.memory.ActivationRanker;
import io.engram.memory.AgentScope;
import io.engram.memory.AnswerUse;
import io.engram.memory.ContextBlock;
import io.engram.memory.ContextCut;
import io.engram.memory.ContextMode;
import io.engram.memory.MemoryReads;
import io.engram.memory.MemoryRecord;
import io.engram.memory.MemorySearch;
import io.engram.memory.RetrievalRequest;
import io.engram.platform.VisibleText;
import io.engram.platform.http.ApiException;
import io.engram.platform.tracing.Traces;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Puts a conversation inside the organization's memory: retrieves what is relevant to the latest
 * user turn (in the caller's agent boundary), keeps it only when the best memory passes the
 * organization's relevance floor ({@link ContextCut}), and writes the best of it within the token
 * budget as a system block placed ahead of the messages. The memories that went into the prompt
 * are counted as retrieved; once the answer is complete, those it drew on ({@link AnswerUse}) are
 * recorded as used, which raises their activation. Being injected alone raises nothing. The
 * memory block's stage: it fills a chat in while it is prepared and hears how its answer ended.
 */
public final class MemoryContext implements Stage {
  /** Short last turns ("and for Berlin?") say little alone: the previous user turn is added up to this length. */
  private static final int SHORT_TURN = 200;

  /**
   * What was injected: the system block, its tokens, the memories in it as read (best first) and
   * the query they were retrieved for.
   */
  public record Injection(
      String systemBlock,
      int tokens,
      List<MemoryRecord> records,
      String query,
      List<RequestRecord.UsedMemory> scored,
      boolean unavailable) {
    static final Injection NONE = new Injection("", 0, List.of(), "", List.of(), false);

    /** The memory index could not be reached: the chat goes on without memory, and says so. */
    static final Injection UNAVAILABLE = new Injection("", 0, List.of(), "", List.of(), true);

    /**
     * Each injected memory's id and version: what the response cache keys on, so an answer never
     * outlives a memory it stood on (computed only for an organization's cache).
     */
    List<String> versions() {
      return records.stream().map(m -> m.id() + "@" + m.version()).toList();
    }

    /** The injected memories as the answer is read against them. */
    List<AnswerUse.Injected> memories() {
      return records.stream().map(m -> new AnswerUse.Injected(m.id(), m.text())).toList();
    }

    public List<String> memoryIds() {
      return records.stream().map(MemoryRecord::id).toList();
    }

    public boolean isEmpty() {
      return records.isEmpty();
    }

    List<ChatMessage> applyTo(List<ChatMessage> messages) {
      if (isEmpty()) {
        return messages;
      }
      List<ChatMessage> withMemory = new ArrayList<>(messages.size() + 1);
      withMemory.add(new ChatMessage(ChatMessage.SYSTEM, systemBlock));
      withMemory.addAll(messages);
      return List.copyOf(withMemory);
    }
  }

  /** The memory span's attributes: what the index found, what was ranked, what went in. */
  private static final AttributeKey<Long> CANDIDATES =
      AttributeKey.longKey("engram.memory.candidates");

  private static final AttributeKey<Long> LEXICAL =
      AttributeKey.longKey("engram.memory.lexical_candidates");
  private static final AttributeKey<Long> VECTOR =
      AttributeKey.longKey("engram.memory.vector_candidates");
  private static final AttributeKey<Long> RANKED = AttributeKey.longKey("engram.memory.ranked");
  private static final AttributeKey<Long> INJECTED = AttributeKey.longKey("engram.memory.injected");
  private static final AttributeKey<List<String>> INJECTED_IDS = GatewaySpans.MEMORY_IDS;
  private static final AttributeKey<Long> TOKENS = GatewaySpans.MEMORY_TOKENS;

  private final MemoryReads memory;
  private final Guardrails guardrails;

  MemoryContext(MemoryReads memory, Guardrails guardrails) {
    this.memory = memory;
    this.guardrails = guardrails;
  }

  @Override
  public void prepare(ModelCall call) {
    ModelCall.MemoryAsk ask = call.memoryAsk();
    if (ask != null) {
      call.inject(retrieve(
          call,
          ask.scope(),
          call.request().messages(),
          ask.limit(),
          (int) Math.min(ask.room(), call.permit().memoryAllowance()),
          ask.floor()));
    }
  }

  /** A complete answer tells which of the injected memories it drew on (they were used). */
  @Override
  public Ended intercept(Chain chain) {
    Ended ended = chain.proceed(chain.sink());
    ModelCall call = chain.call();
    if (ended.answered() && !call.memory().isEmpty()) {
      memory.recordAnswer(
          call.caller(),
          call.memory().query(),
          ended.answer(),
          call.memory().memories(),
          call.requestId());
    }
    return ended;
  }

  private Injection retrieve(
      ModelCall call,
      AgentScope scope,
      List<ChatMessage> messages,
      int limit,
      int tokenBudget,
      double relevanceFloor) {
    String query = query(messages);
    // A conversation whose user turns hold no visible text has nothing to look up: no memory.
    if (VisibleText.isEmpty(query) || tokenBudget < RetrievalRequest.MIN_CONTEXT_TOKENS) {
      return Injection.NONE;
    }
    Span span = Traces.span("memory");
    try {
      Injection injection = inject(call, scope, query, limit, tokenBudget, relevanceFloor, span);
      if (span.isRecording()) {
        span.setAttribute(INJECTED, (long) injection.records().size());
        span.setAttribute(INJECTED_IDS, injection.memoryIds());
        span.setAttribute(TOKENS, (long) injection.tokens());
      }
      return injection;
    } catch (ApiException e) {
      Traces.failed(span, e.getClass().getName(), e.getMessage());
      if (MemorySearch.INDEX_UNAVAILABLE.equals(e.code())) {
        // A distributed index away (Solr): the conversation is answered without memory rather
        // than refused; the response's headers say so.
        return Injection.UNAVAILABLE;
      }
      throw e;
    } catch (RuntimeException e) {
      Traces.failed(span, e.getClass().getName(), e.getMessage());
      throw e;
    } finally {
      span.end();
    }
  }

  /** The memory's answer to the query, cut by the floor and written within the token budget. */
  private Injection inject(
      ModelCall call,
      AgentScope scope,
      String query,
      int limit,
      int tokenBudget,
      double relevanceFloor,
      Span span) {
    Principal caller = call.caller();
    String requestId = call.requestId();
    RetrievalRequest request = RetrievalRequest.forConversation(query, limit, tokenBudget);
    MemoryReads.Retrieval retrieval = memory.retrieve(caller, scope, request, requestId);
    if (span.isRecording()) {
      span.setAttribute(CANDIDATES, (long) retrieval.candidates());
      span.setAttribute(LEXICAL, (long) retrieval.lexicalCandidates());
      span.setAttribute(VECTOR, (long) retrieval.vectorCandidates());
      span.setAttribute(RANKED, (long) retrieval.results().size());
    }
    List<ActivationRanker.Ranked> kept = ContextCut.apply(retrieval.results(), relevanceFloor);
    List<MemoryRecord> ranked =
        screened(call, kept.stream().map(ActivationRanker.Ranked::memory).toList());
    ContextBlock.Assembled block = ContextBlock.assemble(ranked, ContextMode.FULL, tokenBudget);
    if (block.included() == 0) {
      return Injection.NONE;
    }
    memory.recordUse(caller, block.includedIds(), requestId);
    Set<String> included = Set.copyOf(block.includedIds());
    List<MemoryRecord> injected =
        ranked.stream().filter(m -> included.contains(m.id())).toList();
    List<RequestRecord.UsedMemory> scored = kept.stream()
        .filter(r -> included.contains(r.memory().id()))
        .map(r -> new RequestRecord.UsedMemory(r.memory().id(), r.score()))
        .toList();
    return new Injection(block.systemBlock(), block.tokens(), injected, query, scored, false);
  }

  /**
   * The memories as the organization's memory_injection guardrails let them into a chat: one a
   * guardrail blocks is left out (one end user's stored text cannot instruct the model in
   * another's chat), and the call notes it left out; one it redacts goes in redacted.
   */
  private List<MemoryRecord> screened(ModelCall call, List<MemoryRecord> ranked) {
    if (!guardrails.any(call.caller().orgId(), Phase.MEMORY_INJECTION)) {
      return ranked;
    }
    Guardrails.Who who = GuardrailStage.who(call);
    List<MemoryRecord> let = new ArrayList<>(ranked.size());
    for (MemoryRecord record : ranked) {
      Screening screened = guardrails.screen(
          call.caller().orgId(),
          Phase.MEMORY_INJECTION,
          who,
          List.of(new Screening.Text(record.text(), false)),
          call.placeholders());
      call.fired(screened.firings());
      if (screened.blocked()) {
        call.leftOut(record.id());
      } else {
        let.add(screened.fired() ? record.withText(screened.texts().get(0)) : record);
      }
    }
    return let;
  }

  /** The latest user turn, with the one before it when the latest is short; the tail if too long. */
  static String query(List<ChatMessage> messages) {
    List<String> turns = new ArrayList<>();
    for (int i = messages.size() - 1; i >= 0 && turns.size() < 2; i--) {
      ChatMessage message = messages.get(i);
      if (message.role().equals(ChatMessage.USER) && !VisibleText.isEmpty(message.content())) {
        turns.addFirst(message.content().strip());
        if (turns.size() == 1 && message.content().length() >= SHORT_TURN) {
          break;
        }
      }
    }
    String query = String.join("\n", turns);
    return query.length() > RetrievalRequest.MAX_QUERY
        ? query.substring(query.length() - RetrievalRequest.MAX_QUERY)
        : query;
  }
}
