package io.engram.capabilities;

/**
 * Code that carries out a capability: a handler or an action bridge to another part of the
 * service. A registry entry is executable exactly when a handler for its id is registered; every
 * other entry is metadata an assistant may carry but nothing executes yet.
 */
public interface CapabilityHandler {

  /** The registry id this handler executes. */
  String capabilityId();
}
