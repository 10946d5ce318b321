package io.engram.capabilities;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.access.Principal;

/**
 * Capabilities an organization's own system carries out (its action bridges), for the execute
 * route: a capability is executable for an organization when a built-in handler or one of its
 * bridges carries it out, the one rule chats follow too. The actions module provides it; the
 * capabilities stand below the actions, so they ask through this seam.
 */
public interface CapabilityBridges {
  /** No bridges: only built-in handlers execute. */
  CapabilityBridges NONE = new CapabilityBridges() {
    @Override
    public boolean carries(String orgId, String capabilityId) {
      return false;
    }

    @Override
    public JsonNode execute(
        Principal caller,
        Assistant assistant,
        String capabilityId,
        ObjectNode config,
        JsonNode arguments,
        String requestId) {
      throw new IllegalStateException("no action bridges");
    }
  };

  boolean carries(String orgId, String capabilityId);

  /** Runs it through the organization's bridge now; the bridge's result, or an ApiException. */
  JsonNode execute(
      Principal caller,
      Assistant assistant,
      String capabilityId,
      ObjectNode config,
      JsonNode arguments,
      String requestId);
}
