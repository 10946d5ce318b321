package io.engram.inference;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.inference.engine.ClientGoneException;
import io.engram.inference.engine.Generation;
import io.engram.inference.engine.TokenSink;
import io.engram.platform.http.ApiException;

/**
 * A streamed reply: the engine's pieces become OpenAI chunks as they arrive. The first chunk
 * carries the role, every chunk {@code finish_reason: null}, then one chunk carries the finish
 * reason, then (with include_usage) a chunk with empty choices and the usage, then [DONE].
 */
final class StreamingReply implements TokenSink {
  private final EventStream events;
  private final Replies.Header header;
  private final boolean includeUsage;
  private boolean first = true;
  /** Whether the model's choices went on whole, their ends included. */
  private boolean relayed;

  StreamingReply(EventStream events, Replies.Header header, boolean includeUsage) {
    this.events = events;
    this.header = header;
    this.includeUsage = includeUsage;
  }

  @Override
  public void begin() {
    events.open();
  }

  @Override
  public void text(String piece) {
    events.data(Replies.piece(header, piece, first, includeUsage));
    first = false;
  }

  @Override
  public void toolCalls(JsonNode deltas) {
    events.data(Replies.toolCallsPiece(header, deltas, first, includeUsage));
    first = false;
  }

  /** A choice of the model's chunk, handed on whole (several choices, log probabilities). */
  @Override
  public void choice(JsonNode choice) {
    events.data(Replies.relayedPiece(header, choice, includeUsage));
    relayed = true;
  }

  @Override
  public void onClientGone(Runnable abort) {
    events.onGone(abort);
  }

  void complete(String finishReason, Generation.Usage usage, int memoryTokens) {
    if (!relayed) {
      if (first && header.kind() == Replies.Kind.CHAT) {
        // Nothing was generated: the role still comes first, as clients expect.
        text("");
      }
      events.data(Replies.finish(header, finishReason, includeUsage));
    }
    if (includeUsage) {
      events.data(Replies.usageChunk(header, usage, memoryTokens));
    }
    events.done();
  }

  /** A failure after the stream began: one error event, and no [DONE], so clients raise it. */
  void failQuietly(ApiException error) {
    try {
      events.data(Replies.error(error));
    } catch (ClientGoneException gone) {
      // Nobody left to tell.
    }
  }
}
