package io.engram.platform.io;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * How busy the block device holding a directory is, from the kernel's own counters ({@code
 * /sys/dev/block/MAJOR:MINOR/stat}): each {@link #sample} gives the share of the time since the
 * last one that the device was busy, and the read and write operations and bytes per second it
 * served. Where there are no such counters (not Linux, a directory on tmpfs or an overlay without
 * a block device) the meter is absent, and so is what it measures.
 */
public final class VolumeMeter {
  /** What the volume did over one interval. */
  public record Load(
      double busyShare, double readIops, double writeIops, double readBytes, double writeBytes) {}

  private static final long SECTOR = 512;

  private final Path stat;
  private long[] last;
  private long lastNanos;

  private VolumeMeter(Path stat) {
    this.stat = stat;
  }

  /** The meter of the device under {@code dir}, when the kernel counts it. */
  public static Optional<VolumeMeter> of(Path dir) {
    try {
      Path existing = dir.toAbsolutePath();
      while (existing != null && !Files.exists(existing)) {
        existing = existing.getParent();
      }
      if (existing == null) {
        return Optional.empty();
      }
      long dev = (Long) Files.getAttribute(existing, "unix:dev");
      // glibc's encoding of dev_t: the major number in bits 8-19 and 32+, the minor in the rest.
      long major = ((dev >>> 8) & 0xfff) | ((dev >>> 32) & ~0xfffL);
      long minor = (dev & 0xff) | ((dev >>> 12) & ~0xffL);
      Path stat = Path.of("/sys/dev/block/" + major + ":" + minor + "/stat");
      if (!Files.isReadable(stat)) {
        return Optional.empty();
      }
      VolumeMeter meter = new VolumeMeter(stat);
      meter.last = meter.read();
      meter.lastNanos = System.nanoTime();
      return Optional.of(meter);
    } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  /** The load since the last sample (or since the meter was made); empty when unreadable. */
  public synchronized Optional<Load> sample() {
    long[] now;
    try {
      now = read();
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
    long nanos = System.nanoTime();
    double seconds = Math.max(0.001, (nanos - lastNanos) / 1e9);
    long[] before = last;
    last = now;
    lastNanos = nanos;
    // Fields: 0 reads, 2 sectors read, 4 writes, 6 sectors written, 9 milliseconds busy.
    return Optional.of(new Load(
        Math.min(1.0, (now[9] - before[9]) / (seconds * 1000)),
        (now[0] - before[0]) / seconds,
        (now[4] - before[4]) / seconds,
        (now[2] - before[2]) * SECTOR / seconds,
        (now[6] - before[6]) * SECTOR / seconds));
  }

  private long[] read() throws IOException {
    String[] fields = Files.readString(stat).trim().split("\\s+");
    long[] values = new long[11];
    for (int i = 0; i < values.length; i++) {
      values[i] = Long.parseLong(fields[i]);
    }
    return values;
  }
}
