package io.engram.store;

import io.engram.platform.config.ConfigException;
import io.engram.platform.config.EngramConfig;
import io.engram.platform.crypto.SecretBox;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;

/**
 * The server's secret key, which seals the secrets Engram stores: ENGRAM_SECRET_KEY when set,
 * else {@code secret.key} in the data directory, created (owner-only) on first start. The database
 * remembers the key's fingerprint, so a node started with another key (a second node without the
 * shared ENGRAM_SECRET_KEY, a restored data directory) refuses to start instead of failing on
 * every secret later.
 */
public final class SecretKeys {
  static final String FILE = "secret.key";

  private SecretKeys() {}

  public static SecretBox open(EngramConfig.Storage storage, Database db) {
    byte[] key = storage.secretKey().orElseGet(() -> keyFile(storage.dataDir().resolve(FILE)));
    SecretBox box = new SecretBox(key);
    String known = db.write(h -> {
      h.createUpdate("""
              INSERT INTO secret_key_check (id, fingerprint) VALUES (1, :fingerprint)
              ON CONFLICT (id) DO NOTHING""").bind("fingerprint", box.fingerprint()).execute();
      return h.createQuery("SELECT fingerprint FROM secret_key_check WHERE id = 1")
          .mapTo(String.class)
          .one();
    });
    if (!known.equals(box.fingerprint())) {
      throw new ConfigException(
          List.of("The database's secrets were sealed with another key than this node's ("
              + (storage.secretKey().isPresent()
                  ? "ENGRAM_SECRET_KEY"
                  : storage.dataDir().resolve(FILE).toString())
              + "): every node sharing a database needs the same ENGRAM_SECRET_KEY"));
    }
    return box;
  }

  private static byte[] keyFile(Path path) {
    try {
      if (!Files.exists(path)) {
        Files.createDirectories(path.toAbsolutePath().getParent());
        byte[] fresh = new byte[32];
        new SecureRandom().nextBytes(fresh);
        Path temporary = Files.createTempFile(
            path.toAbsolutePath().getParent(),
            ".secret",
            ".tmp",
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.writeString(temporary, HexFormat.of().formatHex(fresh), StandardCharsets.US_ASCII);
        try {
          // A hard link appears whole or not at all, and never replaces a key another process
          // created meanwhile (a rename would).
          Files.createLink(path, temporary);
        } catch (FileAlreadyExistsException raced) {
          // theirs stands
        } finally {
          Files.delete(temporary);
        }
      }
      String text = Files.readString(path, StandardCharsets.US_ASCII).trim();
      if (!text.matches("[0-9a-fA-F]{64}")) {
        throw new ConfigException(
            List.of(path + " must hold the secret key as 64 hexadecimal characters"));
      }
      return HexFormat.of().parseHex(text);
    } catch (IOException e) {
      throw new UncheckedIOException("could not read or create the secret key " + path, e);
    }
  }
}
