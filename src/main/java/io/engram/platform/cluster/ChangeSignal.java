package io.engram.platform.cluster;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * "Something changed" told to the other nodes at once, over the {@link NodeBus}, so that what they
 * poll for every second (the memory change log, organizations' settings) they catch up on within
 * milliseconds. The poll stays: a signal lost while Redis is away costs only the poll's second.
 *
 * <p>Each message names the subject that changed (an organization, or nothing). The node's own
 * messages are ignored; the others' are handed to {@code onChange} on one thread of the signal's
 * own, so a slow catch-up never holds Redis's delivery thread.
 */
public final class ChangeSignal implements AutoCloseable {
  private final NodeBus bus;
  private final String channel;
  private final String node = UUID.randomUUID().toString();
  private final ExecutorService worker;
  private final Consumer<String> onChange;
  private final Set<String> pending = ConcurrentHashMap.newKeySet();
  private final AtomicBoolean draining = new AtomicBoolean();
  private final long spacingNanos;
  private long lastDrainNanos;

  public ChangeSignal(NodeBus bus, String channel, Consumer<String> onChange) {
    this(bus, channel, onChange, Duration.ZERO);
  }

  /**
   * @param spacing the least time between two catch-ups: what arrives meanwhile waits and is taken
   *     in the next one, so a node writing many times a second costs the others a few catch-ups a
   *     second (each a read of the log and a searcher refresh), not one per write
   */
  public ChangeSignal(NodeBus bus, String channel, Consumer<String> onChange, Duration spacing) {
    this.spacingNanos = spacing.toNanos();
    this.bus = bus;
    this.channel = channel;
    this.worker = Executors.newSingleThreadExecutor(
        Thread.ofPlatform().daemon().name("follow-" + channel).factory());
    this.onChange = onChange;
    bus.subscribe(channel, message -> {
      int space = message.indexOf(' ');
      if (space > 0 && !message.substring(0, space).equals(node)) {
        received(message.substring(space + 1));
      }
    });
  }

  /** Subjects wait in a set: a burst of signals about one subject costs one catch-up, not one each. */
  private void received(String subject) {
    pending.add(subject);
    if (draining.compareAndSet(false, true)) {
      worker.execute(this::drain);
    }
  }

  private void drain() {
    long wait = lastDrainNanos + spacingNanos - System.nanoTime();
    if (lastDrainNanos != 0 && wait > 0) {
      try {
        Thread.sleep(Duration.ofNanos(wait));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
    lastDrainNanos = System.nanoTime();
    draining.set(false);
    for (String subject : List.copyOf(pending)) {
      pending.remove(subject);
      try {
        onChange.accept(subject);
      } catch (RuntimeException e) {
        // the poll catches up on it within its second
      }
    }
  }

  /** Tells the other nodes that {@code subject} changed here. */
  public void announce(String subject) {
    bus.publish(channel, node + " " + subject);
  }

  @Override
  public void close() {
    worker.shutdownNow();
  }
}
