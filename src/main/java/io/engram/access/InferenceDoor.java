package io.engram.access;

import io.engram.platform.ratelimit.RateLimitDecision;
import java.util.function.Consumer;

/**
 * The door of the routes that run a model: the credential's request window and one of its
 * organization's concurrency slots, decided together before the request's body is read (with
 * Redis, in one round trip instead of two). The request's admission, once its tokens are known,
 * takes the slot over from the {@link Pass}.
 */
public interface InferenceDoor {

  /**
   * Counts the request in the window {@code windowKey} of {@code windowLimit} a minute and hands
   * the decision to {@code report} (which sets the headers and throws when the window refuses);
   * then holds a slot of the caller's organization, or throws 429 when none is free.
   */
  Pass enter(
      Principal caller, String windowKey, long windowLimit, Consumer<RateLimitDecision> report);

  /**
   * A request let in at the door, carried on the request ({@link Access#inferenceSlot}) to its
   * admission. Closed after the response: the slot goes back unless the admission took it over.
   */
  interface Pass extends AutoCloseable {
    @Override
    void close();
  }
}
