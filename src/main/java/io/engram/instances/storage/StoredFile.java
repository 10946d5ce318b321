package io.engram.instances.storage;

import java.time.Instant;

/** A file of an instance's storage: its path, class, size, SHA-256 (its ETag) and times. */
public record StoredFile(
    String instanceId,
    String path,
    DataClass dataClass,
    long size,
    String sha256,
    String blob,
    String contentType,
    Instant createdAt,
    Instant updatedAt,
    String updatedBy) {

  /** The strong ETag of the file's bytes. */
  public String etag() {
    return '"' + sha256 + '"';
  }
}
