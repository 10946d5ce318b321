package io.engram.memory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.function.Function;

/**
 * Lets concurrent requests share calls to the model. A request that finds a model slot free
 * embeds at once, taking along every question that queued while the slots were busy (up to
 * {@link #MAX_BATCH}); a request that finds none queues and is answered by whichever request
 * holds a slot next. Nothing waits for a batch to fill: alone, a question goes through as it did
 * before; under load, questions that would have waited for a slot anyway ride in one call.
 *
 * <p>No question is left behind: a holder gives its slot back and only then looks at the queue
 * again, so a question queued while every slot was held (its own look for a slot failed) is seen
 * by a holder's look after giving its slot back.
 */
final class QueryBatcher {
  /** More in one call gains little once the matrix products are wide, and holds the first longer. */
  static final int MAX_BATCH = 32;

  private final Semaphore slots;
  private final Function<List<String>, List<float[]>> model;
  private final ConcurrentLinkedQueue<Pending> queue = new ConcurrentLinkedQueue<>();

  /**
   * @param slots the model's calls at once (shared with every other use of the model)
   * @param model embeds a batch of texts, in order
   */
  QueryBatcher(Semaphore slots, Function<List<String>, List<float[]>> model) {
    this.slots = slots;
    this.model = model;
  }

  private record Pending(String text, CompletableFuture<float[]> vector) {}

  float[] embed(String text) {
    Pending mine = new Pending(text, new CompletableFuture<>());
    queue.add(mine);
    // Mine is queued or in a holder's batch; whoever holds a slot serves the queue.
    while (!queue.isEmpty() && slots.tryAcquire()) {
      try {
        runQueued();
      } finally {
        slots.release();
      }
    }
    try {
      return mine.vector().join();
    } catch (CompletionException e) {
      // The caller sees the model's own failure, as when it embedded alone.
      throw e.getCause() instanceof RuntimeException cause ? cause : e;
    }
  }

  /** Questions waiting for a slot now. */
  int queued() {
    return queue.size();
  }

  /** Embeds what is queued, a batch at a time, until the queue is empty. */
  private void runQueued() {
    List<Pending> batch = new ArrayList<>(MAX_BATCH);
    for (Pending next; (next = queue.poll()) != null; ) {
      batch.add(next);
      if (batch.size() == MAX_BATCH) {
        run(batch);
        batch.clear();
      }
    }
    if (!batch.isEmpty()) {
      run(batch);
    }
  }

  private void run(List<Pending> batch) {
    try {
      List<float[]> vectors = model.apply(batch.stream().map(Pending::text).toList());
      for (int i = 0; i < batch.size(); i++) {
        batch.get(i).vector().complete(vectors.get(i));
      }
    } catch (RuntimeException | Error e) {
      if (batch.size() == 1) {
        batch.getFirst().vector().completeExceptionally(e);
      } else {
        // One question the model refuses (nothing to read) must not fail the others with it.
        batch.forEach(pending -> run(List.of(pending)));
      }
    }
  }
}
