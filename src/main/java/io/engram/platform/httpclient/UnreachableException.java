package io.engram.platform.httpclient;

import java.io.IOException;

/** No connection to the origin could be made (refused, unknown host, connect or TLS timeout). */
public final class UnreachableException extends IOException {
  public UnreachableException(String address, IOException cause) {
    super(address + ": " + cause.getMessage(), cause);
  }
}
