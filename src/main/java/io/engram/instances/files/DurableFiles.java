package io.engram.instances.files;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Files a snapshot keeps, written to last: synced before they count (and their directory, where
 * the file system can), hard-linked where the volume allows (else copied and synced), and
 * checked by their SHA-256.
 */
public final class DurableFiles {
  private DurableFiles() {}

  public static void linkOrCopy(Path source, Path target) {
    try {
      try {
        Files.createLink(target, source);
      } catch (UnsupportedOperationException | IOException e) {
        // Another file system (a backup volume): a copy, synced.
        Files.copy(source, target);
        syncFile(target);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot keep " + source.getFileName(), e);
    }
  }

  public static String fileSha256(Path file) {
    try (InputStream in = Files.newInputStream(file)) {
      MessageDigest digest = MessageDigest.getInstance("SHA-256");
      byte[] buffer = new byte[FileStore.BUFFER];
      int read;
      while ((read = in.read(buffer)) != -1) {
        digest.update(buffer, 0, read);
      }
      return HexFormat.of().formatHex(digest.digest());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file, e);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  public static String sha256(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  public static void writeSynced(Path file, byte[] bytes) throws IOException {
    Files.write(file, bytes);
    syncFile(file);
  }

  public static void syncFile(Path file) {
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
      channel.force(true);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot sync " + file, e);
    }
  }

  public static void syncDirectory(Path dir) {
    try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
      channel.force(true);
    } catch (IOException e) {
      // Some file systems cannot sync a directory: the files themselves are synced.
    }
  }
}
