package io.engram.platform.httpclient;

import java.io.IOException;

/** The origin's answer is not well-formed HTTP/1.1. */
public final class MalformedResponseException extends IOException {
  public MalformedResponseException(String message) {
    super(message);
  }
}
