package io.engram.inference;

import io.engram.inference.call.ModelCall;
import io.engram.inference.call.Outcome;
import io.engram.inference.engine.ClientGoneException;
import io.engram.inference.engine.EngineException;
import io.engram.inference.engine.TokenSink;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.Responses;
import io.javalin.http.Context;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers a prepared generation in OpenAI's shape: whole, or as a Server-Sent Events stream of
 * chunks (keep-alives in long silences, a failure after the stream began as one error event). The
 * generation itself is the caller's: one engine call, or a conversation of several steps.
 */
final class ChatResponder {
  private static final Logger LOG = LoggerFactory.getLogger(ChatResponder.class);

  private final KeepAlives keepAlives;

  ChatResponder(KeepAlives keepAlives) {
    this.keepAlives = keepAlives;
  }

  void respond(
      Context ctx,
      ModelCall prepared,
      Replies.Header header,
      boolean includeUsage,
      Function<TokenSink, Outcome> generate) {
    TokenHeaders.write(ctx, prepared.budget());
    if (!prepared.request().stream()) {
      Outcome outcome;
      try {
        outcome = generate.apply(DeploymentHeaders.around(ctx, Discard.INSTANCE));
      } catch (EngineException e) {
        LOG.warn("generation failed: {}", e.getMessage());
        throw e.toApiException();
      } finally {
        GenerationRoutes.guardrailsHeader(ctx, prepared); // with the answer's, once screened
      }
      Responses.json(
          ctx,
          Replies.whole(header, outcome.generation(), outcome.usage(), prepared.memoryTokens()));
      return;
    }
    try (EventStream events = new EventStream(ctx, keepAlives)) {
      StreamingReply reply = new StreamingReply(events, header, includeUsage);
      try {
        Outcome outcome = generate.apply(DeploymentHeaders.around(ctx, reply));
        reply.complete(
            outcome.generation().finishReason(), outcome.usage(), prepared.memoryTokens());
      } catch (ClientGoneException e) {
        LOG.debug("client left during a stream; generation stopped");
      } catch (EngineException e) {
        LOG.warn(
            "generation failed{}: {}", events.isOpen() ? " during the stream" : "", e.getMessage());
        if (!events.isOpen()) {
          throw e.toApiException();
        }
        reply.failQuietly(e.toApiException());
      } catch (ApiException e) {
        if (!events.isOpen()) {
          throw e;
        }
        reply.failQuietly(e);
      } catch (RuntimeException e) {
        if (!events.isOpen()) {
          throw e;
        }
        LOG.error("unexpected failure during a stream", e);
        reply.failQuietly(ApiException.internal());
      }
    }
  }

  /** A sink for whole (non-streamed) replies: the generation's text is taken from its result. */
  private enum Discard implements TokenSink {
    INSTANCE;

    @Override
    public void begin() {}

    @Override
    public void text(String piece) {}
  }
}
