package io.engram.objectstores;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.engram.support.ObjectStoreEmulators;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The S3 store against s3rver where the server-level tests do not reach: a file sent in parts
 * (the path files above 5 GiB take, here on a few MB), read back whole and from an offset, and
 * the refusals told apart.
 */
class S3ObjectStoreTest {
  @TempDir
  Path dir;

  private static S3ObjectStore store(String bucket, String keyId, long single, long part) {
    return new S3ObjectStore(
        bucket,
        "us-east-1",
        keyId,
        ObjectStoreEmulators.S3_SECRET,
        Optional.of(URI.create(ObjectStoreEmulators.s3())),
        single,
        part);
  }

  @Test
  void aFileInPartsArrivesWholeAndReadsBackFromAnyOffset() throws Exception {
    byte[] bytes = new byte[13 * 1024 * 1024 + 5];
    new Random(9).nextBytes(bytes);
    Path file = dir.resolve("parts.bin");
    Files.write(file, bytes);
    String sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    String key = "parts/" + System.nanoTime() + ".bin";
    try (S3ObjectStore store =
        store("engram-test", ObjectStoreEmulators.S3_ACCESS_KEY, 1024 * 1024, 5L * 1024 * 1024)) {
      store.write(key, file, sha);
      StoredObject written = store.head(key).orElseThrow();
      assertThat(written.size()).isEqualTo(bytes.length);
      assertThat(written.sha256()).isEqualTo(sha);
      try (InputStream whole = store.read(key, 0)) {
        assertThat(whole.readAllBytes()).isEqualTo(bytes);
      }
      try (InputStream tail = store.read(key, 7_000_000)) {
        byte[] rest = tail.readAllBytes();
        assertThat(rest).hasSize(bytes.length - 7_000_000);
        assertThat(rest[0]).isEqualTo(bytes[7_000_000]);
      }
      assertThat(store.list("parts/", 1000)).extracting(StoredObject::key).contains(key);
      store.delete(key);
      assertThat(store.head(key)).isEmpty();
    }
  }

  @Test
  void refusalsAreToldApart() {
    try (S3ObjectStore stranger = store("engram-test", "AKIANOTAKEY", 1, 1)) {
      assertThatThrownBy(stranger::probe)
          .isInstanceOfSatisfying(
              ObjectStoreException.class,
              e -> assertThat(e.kind()).isEqualTo(ObjectStoreException.Kind.DENIED));
    }
    try (S3ObjectStore missing =
        store("no-such-bucket", ObjectStoreEmulators.S3_ACCESS_KEY, 1, 1)) {
      assertThatThrownBy(missing::probe)
          .isInstanceOfSatisfying(
              ObjectStoreException.class,
              e -> assertThat(e.kind()).isEqualTo(ObjectStoreException.Kind.NOT_FOUND));
    }
    try (S3ObjectStore closed = new S3ObjectStore(
        "engram-test",
        "us-east-1",
        "k",
        "s",
        Optional.of(URI.create("http://127.0.0.1:9")),
        1,
        1)) {
      assertThatThrownBy(closed::probe)
          .isInstanceOfSatisfying(
              ObjectStoreException.class,
              e -> assertThat(e.kind()).isEqualTo(ObjectStoreException.Kind.UNREACHABLE));
    }
  }
}
