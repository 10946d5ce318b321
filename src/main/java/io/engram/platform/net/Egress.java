package io.engram.platform.net;

import java.net.URI;

/**
 * The gate every outbound connection made on an organization's behalf passes first: upstream
 * model calls, webhooks, action bridges, object stores, a remote trainer. It resolves the host,
 * checks each address against the organization's outbound rules and pins the addresses it let
 * through ({@link AddressBook}), so the connection that follows goes to an address that was
 * checked, whatever the name resolves to a moment later.
 */
public interface Egress {
  /** No rules: every connection may go (the server without a network module, and unit tests). */
  Egress OPEN = (orgId, host, port) -> {};

  /**
   * Returns when the organization may connect to the host and port; throws {@link
   * OutboundBlocked} naming the rule that refuses it.
   */
  void admit(String orgId, String host, int port);

  /** {@link #admit(String, String, int)} for a URL: its host and its port (or its scheme's). */
  default void admit(String orgId, URI url) {
    int port = url.getPort();
    if (port < 0) {
      port = "http".equalsIgnoreCase(url.getScheme()) ? 80 : 443;
    }
    String host = url.getHost();
    if (host != null && host.startsWith("[")) {
      host = host.substring(1, host.length() - 1);
    }
    admit(orgId, host, port);
  }
}
