package io.engram.inference;

import io.engram.platform.module.Job;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The keep-alives of every open event stream, from one job of the module's: each
 * look sends a comment line down the streams that have been silent for the interval. A stream
 * only joins and leaves a set; a timer task scheduled and cancelled per stream woke the timer
 * thread twice a stream and took a tenth of a streamed chat's CPU (docs/benchmarks.md, issue 43).
 */
final class KeepAlives {
  private static final Logger LOG = LoggerFactory.getLogger(KeepAlives.class);

  private final Duration interval;
  private final Set<EventStream> open = ConcurrentHashMap.newKeySet();

  KeepAlives(Duration interval) {
    this.interval = interval;
  }

  /** Looks at the open streams every quarter of the interval (every 100 ms at most often). */
  Job job() {
    return Job.every(
        Duration.ofMillis(Math.max(100, interval.toMillis() / 4)),
        "send keep-alives down silent event streams",
        this::look);
  }

  /** How long a stream may be silent before it gets a keep-alive. */
  Duration interval() {
    return interval;
  }

  void watch(EventStream stream) {
    open.add(stream);
  }

  void forget(EventStream stream) {
    open.remove(stream);
  }

  private void look() {
    // A failure must not end the periodic task, or no stream would get a keep-alive again.
    for (EventStream stream : open) {
      try {
        stream.keepAlive();
      } catch (RuntimeException e) {
        LOG.warn("a stream's keep-alive failed", e);
      }
    }
  }
}
