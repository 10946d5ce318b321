package io.engram.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A small tmpfs mounted for one test, filled with a ballast file until no byte is left, given room
 * back, and unmounted. The tests run as root here and in CI (which makes network namespaces the
 * same way); elsewhere they are skipped with the reason, never in CI.
 */
public final class SmallDisk implements AutoCloseable {
  private final Path dir;
  private final Path ballast;

  private SmallDisk(Path dir) {
    this.dir = dir;
    this.ballast = dir.resolve("ballast");
  }

  /** A tmpfs of {@code megabytes} MB mounted at {@code dir} (made if absent). */
  public static SmallDisk mount(Path dir, int megabytes) throws Exception {
    Files.createDirectories(dir);
    Process mount = new ProcessBuilder(
            "mount", "-t", "tmpfs", "-o", "size=" + megabytes + "m", "tmpfs", dir.toString())
        .redirectErrorStream(true)
        .start();
    boolean done = mount.waitFor(Duration.ofSeconds(10).toMillis(), TimeUnit.MILLISECONDS);
    String output = new String(mount.getInputStream().readAllBytes());
    boolean mounted = done && mount.exitValue() == 0;
    if (!mounted && "true".equalsIgnoreCase(System.getenv("CI"))) {
      throw new IllegalStateException("CI needs to mount a small tmpfs (as root): " + output);
    }
    assumeTrue(
        mounted,
        () -> "cannot mount a tmpfs here (" + output.strip()
            + "); the full-disk tests need root and run in CI");
    return new SmallDisk(dir);
  }

  public Path dir() {
    return dir;
  }

  /** Hands the disk to the operating system's user {@code owner} (a database server's, say). */
  public SmallDisk ownedBy(String owner) throws Exception {
    Process chown = new ProcessBuilder("chown", owner + ":" + owner, dir.toString())
        .redirectErrorStream(true)
        .start();
    assertThat(chown.waitFor())
        .as(new String(chown.getInputStream().readAllBytes()))
        .isZero();
    return this;
  }

  /** Writes zeros to the ballast until the file system refuses a byte more (appending). */
  public void fill() throws IOException {
    byte[] block = new byte[64 * 1024];
    try (OutputStream out =
        Files.newOutputStream(ballast, StandardOpenOption.CREATE, StandardOpenOption.APPEND)) {
      while (true) {
        out.write(block);
      }
    } catch (IOException full) {
      assertThat(String.valueOf(full.getMessage())).containsIgnoringCase("space");
    }
    // Smaller pieces, until not even 512 bytes fit.
    byte[] small = new byte[512];
    try (OutputStream out = Files.newOutputStream(ballast, StandardOpenOption.APPEND)) {
      while (true) {
        out.write(small);
        out.flush();
      }
    } catch (IOException full) {
      // full
    }
  }

  /** Gives {@code bytes} of the ballast back. */
  public void free(long bytes) throws IOException {
    try (FileChannel file = FileChannel.open(ballast, StandardOpenOption.WRITE)) {
      file.truncate(Math.max(0, file.size() - bytes));
    }
  }

  /** Gives all the ballast back. */
  public void empty() throws IOException {
    Files.deleteIfExists(ballast);
  }

  @Override
  public void close() throws Exception {
    new ProcessBuilder("umount", "-l", dir.toString()).inheritIO().start().waitFor();
  }
}
