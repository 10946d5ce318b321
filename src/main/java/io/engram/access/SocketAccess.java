package io.engram.access;

import io.engram.settings.EffectiveConfig;
import java.util.List;
import java.util.function.Supplier;

/**
 * The access rules for inference over a WebSocket, where the secret comes in a message rather than
 * a header and every message is a request: the same rules as {@link Requires#inference}, the same
 * network boundary, and each inference counted in the credential's requests per minute.
 */
public final class SocketAccess {
  private final Authentication authentication;
  private final NetworkBoundaryCheck boundary;
  private final RequestWindows windows;

  SocketAccess(
      Authentication authentication, NetworkBoundaryCheck boundary, RequestWindows windows) {
    this.authentication = authentication;
    this.boundary = boundary;
    this.windows = windows;
  }

  /** The caller of the secret, if it may run inference (401, 403). */
  public Principal inferenceCaller(String secret) {
    return Requires.requireAny(
        authentication.resolve(secret), Scope.INFERENCE_CHAT, Permission.INFERENCE);
  }

  /** The organization's custom domain, allowlist and peerings, checked at the upgrade's address. */
  public void requireNetworkBoundary(
      EffectiveConfig config,
      Principal principal,
      String peer,
      Supplier<List<String>> forwardedFor,
      String host) {
    boundary.require(config, principal, peer, forwardedFor, host);
  }

  /** Counts one message against the credential's per-minute budget; 429 when spent. */
  public void countRequest(Principal principal) {
    windows.count(principal);
  }
}
