package io.engram.platform.net;

import java.util.Optional;

/**
 * What the organizations' network settings decide about an incoming request, beyond the
 * allowlist of their configuration: which organization a custom domain serves, and which
 * addresses reach an organization over an accepted VPC peering.
 */
public interface NetworkBoundary {
  NetworkBoundary NONE = new NetworkBoundary() {
    @Override
    public Optional<String> organizationOf(String host) {
      return Optional.empty();
    }

    @Override
    public boolean peered(String orgId, byte[] address) {
      return false;
    }
  };

  /**
   * The organization whose serving custom domain {@code host} is; empty for any other name. A
   * custom domain that is not serving is refused here (the implementation throws its 404).
   */
  Optional<String> organizationOf(String host);

  /** Whether an accepted VPC peering of the organization covers the address. */
  boolean peered(String orgId, byte[] address);
}
