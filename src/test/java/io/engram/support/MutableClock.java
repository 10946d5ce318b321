package io.engram.support;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock tests move by hand, so expiry and rate-limit windows are exact. */
public final class MutableClock extends Clock {
  private volatile Instant now;

  public MutableClock(Instant start) {
    this.now = start;
  }

  /** A clock at the start of a minute, so a rate-limit window is never cut in two. */
  public static MutableClock atMinuteStart() {
    return new MutableClock(Instant.parse("2030-01-01T10:00:00Z"));
  }

  public void set(Instant instant) {
    now = instant;
  }

  public synchronized void advance(Duration duration) {
    now = now.plus(duration);
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    return this;
  }

  @Override
  public Instant instant() {
    return now;
  }
}
