package io.engram.capabilities;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.access.Principal;
import java.time.Instant;

/**
 * Code that carries out a capability: a handler, or an action bridge to another part of the
 * service. A registry entry is executable exactly when a handler for its id is registered; every
 * other entry is metadata an assistant may carry but nothing executes.
 */
public interface CapabilityHandler {

  /**
   * What one execution is given: the organization, who asked (the conversation's or the route's
   * credential, or whoever approved it, and
   * the agent boundary it runs in, null for the organization's), whose assistant, its config as in
   * force, the arguments, and the request and tool call it came from (null outside a conversation).
   */
  record Invocation(
      String orgId,
      Principal caller,
      String agent,
      String assistantId,
      ObjectNode config,
      JsonNode arguments,
      Instant at,
      String requestId,
      String toolCallId) {}

  /** The registry id this handler executes. */
  String capabilityId();

  /**
   * Checks, when the registry loads, that the entry's config is one this handler can honour (for
   * example that every allowed value of a field is one it implements), so a mismatch between the
   * file and the code stops start-up instead of failing a request.
   */
  default void checkEntry(Capability entry) {}

  /**
   * Carries out the capability within its config. Arguments the config does not allow are an
   * {@link io.engram.platform.http.ApiException} (4xx), never a partial result.
   */
  JsonNode execute(Invocation invocation);
}
