package io.engram.access;

import io.javalin.http.Context;
import io.javalin.security.RouteRole;

/**
 * What a route requires of its caller, declared with the route ({@link Requires}) and enforced by
 * the {@link AccessChain} before the route runs, so no route can forget to ask. A requirement
 * checks an authenticated caller; it answers 404 for what belongs to another organization before
 * it answers 403 for what the caller may not do, so nothing leaks another organization's
 * existence.
 */
public interface Requirement extends RouteRole {

  /** How a request let in is counted. */
  enum Counting {
    /** In the caller's rate window (per credential on /v1, per organization on /api). */
    WINDOW,
    /** In the rate window and, decided together, one of the organization's inference slots. */
    INFERENCE_SLOT
  }

  /** Throws the route's 404 or 403 when the caller may not call it. */
  void check(Context ctx, Principal caller);

  default Counting counting() {
    return Counting.WINDOW;
  }

  /** Whether the route answers without a credential (a sign-in, a health check). */
  default boolean open() {
    return false;
  }

  /**
   * Whether the route is one of the gateway's inference routes (chat, completions, embeddings,
   * messages, responses, models): with API_KEY_REQUIRED=false and ENGRAM_OPEN_ORGANIZATION, these
   * answer a request without a credential as that organization.
   */
  default boolean servesInference() {
    return false;
  }

  /** Whether the route answers without a credential when API_KEY_REQUIRED=false (/metrics). */
  default boolean openWhenKeysNotRequired() {
    return false;
  }
}
