package io.engram.memory;

import io.engram.access.Principal;

/**
 * Who made a change, as a memory's origin and its transitions record it: a caller's credential
 * and user, or none for reflection's own changes, and the request (or reflection run) it belonged
 * to.
 */
public record ChangeAuthor(String credentialId, String userId, String requestId) {

  public static ChangeAuthor of(Principal caller, String requestId) {
    return new ChangeAuthor(caller.credentialId(), userId(caller), requestId);
  }

  /** The caller's user, for a transition's record (null: a credential without one). */
  public static String userId(Principal caller) {
    return caller.user() == null ? null : caller.user().id();
  }

  /** A reflection run's own change: no credential, no user, the run in place of a request. */
  public static ChangeAuthor reflection(String runId) {
    return new ChangeAuthor(null, null, runId);
  }
}
