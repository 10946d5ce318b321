package io.engram.platform.httpclient;

import io.engram.platform.io.BlockInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;

/** A body of a declared Content-Length. */
final class FixedLengthBody extends BlockInputStream {
  private final InputStream in;
  private long remaining;

  FixedLengthBody(InputStream in, long length) {
    this.in = in;
    this.remaining = length;
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    if (remaining == 0) {
      return -1;
    }
    int read = in.read(b, off, (int) Math.min(len, remaining));
    if (read < 0) {
      throw new EOFException(
          "the connection closed " + remaining + " bytes before the end of the body");
    }
    remaining -= read;
    return read;
  }

  @Override
  public int available() throws IOException {
    return (int) Math.min(in.available(), remaining);
  }
}
