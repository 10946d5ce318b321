package io.engram.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

class SqliteStoreContractTest extends StoreContractTest {
  private Path dir;

  @Override
  Database open() {
    try {
      dir = Files.createTempDirectory("engram-sqlite");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new SqliteDatabase(dir.resolve("engram.db"));
  }

  @Override
  void cleanUp() {
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
