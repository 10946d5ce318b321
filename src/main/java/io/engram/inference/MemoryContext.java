package io.engram.inference;

import io.engram.access.Principal;
import io.engram.inference.engine.ChatMessage;
import io.engram.memory.ActivationRanker;
import io.engram.memory.AgentScope;
import io.engram.memory.ContextBlock;
import io.engram.memory.ContextMode;
import io.engram.memory.MemoryService;
import io.engram.memory.RetrievalRequest;
import io.engram.platform.VisibleText;
import java.util.ArrayList;
import java.util.List;

/**
 * Puts a conversation inside the organization's memory: retrieves what is relevant to the latest
 * user turn (in the caller's agent boundary), writes it as a system block placed ahead of the
 * messages, and records the memories that went into the prompt as used, which raises their
 * activation like any other use.
 */
final class MemoryContext {
  /** Short last turns ("and for Berlin?") say little alone: the previous user turn is added up to this length. */
  private static final int SHORT_TURN = 200;

  /** What was injected: the system block, its tokens, and the memories in it (best first). */
  record Injection(String systemBlock, int tokens, List<String> memoryIds) {
    static final Injection NONE = new Injection("", 0, List.of());

    boolean isEmpty() {
      return memoryIds.isEmpty();
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

  private final MemoryService memory;

  MemoryContext(MemoryService memory) {
    this.memory = memory;
  }

  Injection retrieve(
      Principal caller,
      AgentScope scope,
      List<ChatMessage> messages,
      int limit,
      int tokenBudget,
      String requestId) {
    String query = query(messages);
    // A conversation whose user turns hold no visible text has nothing to look up: no memory.
    if (VisibleText.isEmpty(query) || tokenBudget < RetrievalRequest.MIN_CONTEXT_TOKENS) {
      return Injection.NONE;
    }
    RetrievalRequest request = RetrievalRequest.forConversation(query, limit, tokenBudget);
    MemoryService.Retrieval retrieval = memory.retrieve(caller, scope, request, requestId);
    ContextBlock.Assembled block = ContextBlock.assemble(
        retrieval.results().stream().map(ActivationRanker.Ranked::memory).toList(),
        ContextMode.FULL,
        tokenBudget);
    if (block.included() == 0) {
      return Injection.NONE;
    }
    memory.recordUse(caller, block.includedIds(), requestId);
    return new Injection(block.systemBlock(), block.tokens(), block.includedIds());
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
