package io.engram.objectstores;

/** A store refused or failed an operation; {@link Kind} says which way, for the error shown. */
public final class ObjectStoreException extends RuntimeException {
  /** What went wrong, in the terms the API reports. */
  public enum Kind {
    /** The credentials are wrong or lack the permission. */
    DENIED,
    /** The bucket, container or object does not exist. */
    NOT_FOUND,
    /** The store could not be reached or timed out. */
    UNREACHABLE,
    /** The store answered with another error. */
    FAILED
  }

  private final Kind kind;

  public ObjectStoreException(Kind kind, String message, Throwable cause) {
    super(message, cause);
    this.kind = kind;
  }

  public Kind kind() {
    return kind;
  }
}
