package io.engram.platform.io;

import java.io.IOException;
import java.io.InputStream;

/** A stream that is read in blocks; reading one byte is a block read of one. */
public abstract class BlockInputStream extends InputStream {

  @Override
  public final int read() throws IOException {
    byte[] one = new byte[1];
    return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
  }

  @Override
  public abstract int read(byte[] target, int offset, int length) throws IOException;
}
