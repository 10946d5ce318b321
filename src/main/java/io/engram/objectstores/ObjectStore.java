package io.engram.objectstores;

import java.io.InputStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * One bucket (S3, Cloud Storage) or container (Azure) of an external store, with the few operations
 * import, export, retention and backups need. Every failure is an {@link ObjectStoreException}.
 */
public interface ObjectStore extends AutoCloseable {
  /** Writes a small probe object and deletes it: the credentials can list, write and delete. */
  void probe();

  /** The objects whose keys start with {@code prefix}, at most {@code max}, in key order. */
  List<StoredObject> list(String prefix, int max);

  Optional<StoredObject> head(String key);

  /** The object's bytes from {@code offset} to its end (a resumed import asks for the rest). */
  InputStream read(String key, long offset);

  /** Writes {@code file} as {@code key}, replacing it, with its SHA-256 kept in the metadata. */
  void write(String key, Path file, String sha256);

  void delete(String key);

  @Override
  void close();
}
