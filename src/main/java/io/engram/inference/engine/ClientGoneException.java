package io.engram.inference.engine;

/**
 * The caller closed the connection while its response was being produced. Engines let it
 * through and stop: a remote engine closes the upstream request, the local engine stops generating.
 */
public final class ClientGoneException extends RuntimeException {
  public ClientGoneException(Throwable cause) {
    super("the client closed the connection", cause, false, false);
  }
}
