package io.engram.platform.tracing;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.ReadWriteSpan;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SpanProcessor;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ended spans on their way to the exporter: a bounded queue a request only offers to (a full
 * queue drops the span and counts it; a request never waits for the collector), emptied by one
 * thread in batches, at the latest every schedule delay. The SDK's batch processor does the same
 * but counts its drops only into an OpenTelemetry meter; here every span's fate is counted in the
 * node's own metrics ({@code engram_trace_spans_total{outcome=exported|dropped|failed}}).
 */
final class SpanQueue implements SpanProcessor {
  private static final Logger LOG = LoggerFactory.getLogger(SpanQueue.class);
  /** How often the exporting thread looks for a flush asked of it while it waits for spans. */
  private static final long WAKE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  private final ArrayBlockingQueue<ReadableSpan> queue;
  private final SpanExporter exporter;
  private final int batchSize;
  private final long delayNanos;
  private final Duration exportTimeout;
  private final Counter exported;
  private final Counter dropped;
  private final Counter failed;
  private final Thread worker;
  private volatile boolean running = true;
  private volatile CompletableResultCode flushAsked;
  private long lastFailureLogged;

  SpanQueue(
      SpanExporter exporter,
      int capacity,
      int batchSize,
      Duration delay,
      Duration exportTimeout,
      MeterRegistry registry) {
    this.exporter = exporter;
    this.queue = new ArrayBlockingQueue<>(capacity);
    this.batchSize = Math.min(batchSize, capacity);
    this.delayNanos = delay.toNanos();
    this.exportTimeout = exportTimeout;
    this.exported = outcome(registry, "exported");
    this.dropped = outcome(registry, "dropped");
    this.failed = outcome(registry, "failed");
    Gauge.builder("engram_trace_spans_queued", queue, ArrayBlockingQueue::size)
        .description("Ended spans waiting for export")
        .register(registry);
    this.worker = Thread.ofPlatform().name("engram-span-export").daemon().start(this::run);
  }

  private static Counter outcome(MeterRegistry registry, String outcome) {
    return Counter.builder("engram_trace_spans_total")
        .description("Spans ended on this node, by what became of them")
        .tag("outcome", outcome)
        .register(registry);
  }

  @Override
  public void onStart(Context parent, ReadWriteSpan span) {}

  @Override
  public boolean isStartRequired() {
    return false;
  }

  @Override
  public void onEnd(ReadableSpan span) {
    if (!span.getSpanContext().isSampled()) {
      return;
    }
    if (!running || !queue.offer(span)) {
      dropped.increment();
    }
  }

  @Override
  public boolean isEndRequired() {
    return true;
  }

  /** Exports what is queued now; done when it is (or failed). */
  @Override
  public CompletableResultCode forceFlush() {
    CompletableResultCode asked = new CompletableResultCode();
    flushAsked = asked;
    return asked;
  }

  /** Exports what is queued (within the export timeout), then closes the exporter. */
  @Override
  public CompletableResultCode shutdown() {
    running = false;
    try {
      worker.join(exportTimeout.toMillis() + 1_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return exporter.shutdown();
  }

  private void run() {
    List<SpanData> batch = new ArrayList<>(batchSize);
    long nextExport = System.nanoTime() + delayNanos;
    while (running || !queue.isEmpty()) {
      try {
        long wait = Math.min(WAKE_NANOS, nextExport - System.nanoTime());
        ReadableSpan span =
            running ? queue.poll(Math.max(0, wait), TimeUnit.NANOSECONDS) : queue.poll();
        if (span != null) {
          batch.add(span.toSpanData());
        }
        CompletableResultCode flush = flushAsked;
        boolean due = System.nanoTime() >= nextExport || !running || flush != null;
        if (batch.size() >= batchSize || due) {
          for (ReadableSpan more; batch.size() < batchSize && (more = queue.poll()) != null; ) {
            batch.add(more.toSpanData());
          }
          export(batch);
          if (queue.isEmpty()) {
            nextExport = System.nanoTime() + delayNanos;
            if (flush != null) {
              flushAsked = null;
              flush.succeed();
            }
          }
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (RuntimeException e) {
        LOG.warn("span export failed: {}", e.toString());
        failed.increment(batch.size());
        batch.clear();
      }
    }
    export(batch);
  }

  private void export(List<SpanData> batch) {
    if (batch.isEmpty()) {
      return;
    }
    CompletableResultCode result =
        exporter.export(List.copyOf(batch)).join(exportTimeout.toMillis(), TimeUnit.MILLISECONDS);
    if (result.isSuccess()) {
      exported.increment(batch.size());
    } else {
      failed.increment(batch.size());
      long now = System.nanoTime();
      // A collector that is down fails every batch: said once a minute, counted every time.
      if (now - lastFailureLogged > TimeUnit.MINUTES.toNanos(1) || lastFailureLogged == 0) {
        lastFailureLogged = now;
        LOG.warn(
            "{} spans could not be exported (engram_trace_spans_total counts them)", batch.size());
      }
    }
    batch.clear();
  }
}
