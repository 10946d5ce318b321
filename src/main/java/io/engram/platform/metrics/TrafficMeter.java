package io.engram.platform.metrics;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Requests and server errors per organization over the last hour, in ten-second buckets: what the
 * error-rate and unusual-traffic alerts read. Recording is a few array writes under the
 * organization's own lock; a bucket is reset when the ring comes round to it again. Per node.
 */
public final class TrafficMeter {
  static final int BUCKET_SECONDS = 10;
  static final int BUCKETS = 360; // one hour

  /** Requests and server errors in a window. */
  public record Counts(long requests, long errors) {
    public double errorRate() {
      return requests == 0 ? 0 : (double) errors / requests;
    }
  }

  private static final class Ring {
    final long[] epochs = new long[BUCKETS];
    final long[] requests = new long[BUCKETS];
    final long[] errors = new long[BUCKETS];

    synchronized void add(long bucket, boolean error) {
      int slot = (int) (bucket % BUCKETS);
      if (epochs[slot] != bucket) {
        epochs[slot] = bucket;
        requests[slot] = 0;
        errors[slot] = 0;
      }
      requests[slot]++;
      if (error) {
        errors[slot]++;
      }
    }

    synchronized Counts sum(long fromBucket, long toBucket) {
      long r = 0;
      long e = 0;
      for (long b = Math.max(fromBucket, toBucket - BUCKETS + 1); b <= toBucket; b++) {
        int slot = (int) (b % BUCKETS);
        if (epochs[slot] == b) {
          r += requests[slot];
          e += errors[slot];
        }
      }
      return new Counts(r, e);
    }
  }

  private final Clock clock;
  private final Map<String, Ring> rings = new ConcurrentHashMap<>();

  public TrafficMeter(Clock clock) {
    this.clock = clock;
  }

  /** One answered request of the organization; a 5xx is a server error. */
  public void record(String orgId, int status) {
    rings.computeIfAbsent(orgId, id -> new Ring()).add(bucketNow(), status >= 500);
  }

  /** The organization's requests and errors in the last {@code window}. */
  public Counts last(String orgId, Duration window) {
    Ring ring = rings.get(orgId);
    if (ring == null) {
      return new Counts(0, 0);
    }
    long now = bucketNow();
    return ring.sum(now - Math.max(1, window.toSeconds() / BUCKET_SECONDS) + 1, now);
  }

  /**
   * The organization's requests per window of {@code window} length, for the {@code count}
   * windows before the last one (oldest first): the baseline an unusual rate is judged against.
   */
  public long[] history(String orgId, Duration window, int count) {
    Ring ring = rings.get(orgId);
    long[] counts = new long[count];
    if (ring == null) {
      return counts;
    }
    long size = Math.max(1, window.toSeconds() / BUCKET_SECONDS);
    long end = bucketNow() - size; // the windows before the current one
    for (int i = count - 1; i >= 0; i--) {
      counts[i] = ring.sum(end - size + 1, end).requests();
      end -= size;
    }
    return counts;
  }

  /** Organizations with requests in the last hour on this node. */
  public Set<String> organizations() {
    return Set.copyOf(rings.keySet());
  }

  private long bucketNow() {
    return clock.millis() / 1000 / BUCKET_SECONDS;
  }
}
