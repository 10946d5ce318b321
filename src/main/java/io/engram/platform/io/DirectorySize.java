package io.engram.platform.io;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.stream.Stream;

/** The bytes a directory's files hold on disk, all the way down (0 when it does not exist). */
public final class DirectorySize {
  private DirectorySize() {}

  public static long of(Path dir) {
    if (!Files.isDirectory(dir)) {
      return 0;
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      return walk.filter(Files::isRegularFile).mapToLong(DirectorySize::size).sum();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot measure " + dir, e);
    }
  }

  private static long size(Path file) {
    try {
      return Files.size(file);
    } catch (NoSuchFileException e) {
      return 0; // merged away by the index while it was being measured
    } catch (IOException e) {
      throw new UncheckedIOException("cannot measure " + file, e);
    }
  }
}
