package io.engram.organizations;

import java.time.Instant;

/**
 * One of an organization's instances ({@code nano_...}): a storage space and the instance layer of
 * its environment variables. {@code running} while it serves; {@code deleting} from the moment its
 * deletion is accepted until its files are gone (a node that crashed part way finishes it on
 * start). The organization's {@code default} instance is the one whose variables apply to its
 * requests.
 */
public record Instance(
    String id,
    String orgId,
    String name,
    Status status,
    boolean isDefault,
    Instant createdAt,
    String createdBy,
    Instant updatedAt,
    Instant restartedAt) {

  /** An instance's lifecycle: running until deleted; deleting while its storage is removed. */
  public enum Status {
    RUNNING,
    DELETING;

    public String wireName() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }
}
