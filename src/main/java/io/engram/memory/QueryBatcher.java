package io.engram.memory;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * The model's slots (one call at a time per slot) and the questions waiting for one, so that
 * concurrent requests share calls. A request that finds a slot free embeds at once, taking along
 * the questions that queued while every slot was busy (up to {@link #MAX_BATCH}); a request that
 * finds none queues. Nothing waits for a batch to fill: alone, a question goes through at once;
 * under load, questions that would have waited for a slot anyway ride in one call.
 *
 * <p>Fair, and nothing is left behind: whoever finishes with a slot hands it to the oldest waiter
 * (who then runs its own question with those queued behind it) or, with no one waiting, frees it;
 * both under one lock with the queue, so a waiter is never queued beside a free slot. Each holder
 * runs one call and passes the slot on, so a request never serves others for longer than that.
 *
 * <p>Questions have fewer slots than the machine has cores ({@link Embedder}): on two cores, two
 * question slots were almost never both busy (a third request could not run to queue behind them),
 * so nothing was shared and the requests that reached the model together lengthened each other's
 * wait; with one, the questions that arrive during a call ride in the next (docs/benchmarks.md).
 */
final class QueryBatcher {
  /** More in one call gains little once the matrix products are wide, and holds the first longer. */
  static final int MAX_BATCH = 32;

  private final Function<List<String>, List<float[]>> model;
  private final ReentrantLock lock = new ReentrantLock();
  private final ArrayDeque<Waiter> queue = new ArrayDeque<>();
  private int free;

  /**
   * @param slots the model's calls for questions at once
   * @param model embeds a batch of texts, in order
   */
  QueryBatcher(int slots, Function<List<String>, List<float[]>> model) {
    this.free = slots;
    this.model = model;
  }

  /** A question waiting for a slot or for its answer. */
  private static final class Waiter {
    private static final int WAITING = 0;
    private static final int HOLDS_SLOT = 1;
    private static final int ANSWERED = 2;

    final String text;
    final Thread thread = Thread.currentThread();
    volatile int state = WAITING;
    float[] vector;
    RuntimeException failure;

    Waiter(String text) {
      this.text = text;
    }

    void wake(int to) {
      state = to;
      LockSupport.unpark(thread);
    }

    /** Parks until answered or handed a slot; an interrupt is kept for the caller, not lost. */
    void awaitTurn() {
      boolean interrupted = false;
      while (state == WAITING) {
        LockSupport.park(this);
        interrupted |= Thread.interrupted();
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  float[] embed(String text) {
    Waiter mine = new Waiter(text);
    if (enter(mine)) {
      List<Waiter> batch = new ArrayList<>(List.of(mine));
      try {
        lock.lock();
        try {
          takeQuestions(batch);
        } finally {
          lock.unlock();
        }
        run(batch);
      } finally {
        passOn();
      }
    }
    if (mine.failure != null) {
      throw mine.failure;
    }
    return mine.vector;
  }

  /** Questions waiting for a slot now. */
  int queued() {
    lock.lock();
    try {
      return queue.size();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Takes a slot, waiting in line when none is free. True when the caller holds a slot; false when
   * its question was answered in someone else's call meanwhile.
   */
  private boolean enter(Waiter mine) {
    lock.lock();
    try {
      if (free > 0) {
        free--;
        return true;
      }
      queue.add(mine);
    } finally {
      lock.unlock();
    }
    mine.awaitTurn();
    return mine.state == Waiter.HOLDS_SLOT;
  }

  /** Called under the lock: moves waiting questions into the batch. */
  private void takeQuestions(List<Waiter> batch) {
    while (!queue.isEmpty() && batch.size() < MAX_BATCH) {
      batch.add(queue.poll());
    }
  }

  /** The slot goes to the oldest waiter, or is freed when no one waits. */
  private void passOn() {
    Waiter next;
    lock.lock();
    try {
      next = queue.poll();
      if (next == null) {
        free++;
        return;
      }
    } finally {
      lock.unlock();
    }
    next.wake(Waiter.HOLDS_SLOT);
  }

  private void run(List<Waiter> batch) {
    try {
      List<float[]> vectors = model.apply(batch.stream().map(w -> w.text).toList());
      for (int i = 0; i < batch.size(); i++) {
        answer(batch.get(i), vectors.get(i), null);
      }
    } catch (RuntimeException | Error e) {
      if (batch.size() == 1) {
        answer(
            batch.getFirst(),
            null,
            e instanceof RuntimeException failure
                ? failure
                : new IllegalStateException("the embedding model failed", e));
      } else {
        // One question the model refuses (nothing to read) must not fail the others with it.
        batch.forEach(waiter -> run(List.of(waiter)));
      }
    }
  }

  private static void answer(Waiter waiter, float[] vector, RuntimeException failure) {
    waiter.vector = vector;
    waiter.failure = failure;
    if (waiter.thread != Thread.currentThread()) {
      waiter.wake(Waiter.ANSWERED);
    }
  }
}
