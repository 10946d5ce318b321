package io.engram.objectstores;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** A part of a file as a stream: {@code length} bytes from {@code offset}, read positionally. */
final class FileSlice extends InputStream {
  private final FileChannel channel;
  private long position;
  private final long end;

  private FileSlice(FileChannel channel, long offset, long length) {
    this.channel = channel;
    this.position = offset;
    this.end = offset + length;
  }

  static InputStream open(Path file, long offset, long length) {
    try {
      return new FileSlice(FileChannel.open(file, StandardOpenOption.READ), offset, length);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file, e);
    }
  }

  @Override
  public int read() throws IOException {
    byte[] one = new byte[1];
    return read(one, 0, 1) == -1 ? -1 : one[0] & 0xff;
  }

  @Override
  public int read(byte[] buffer, int from, int length) throws IOException {
    if (position >= end) {
      return -1;
    }
    int wanted = (int) Math.min(length, end - position);
    int read = channel.read(ByteBuffer.wrap(buffer, from, wanted), position);
    if (read > 0) {
      position += read;
    }
    return read;
  }

  @Override
  public void close() throws IOException {
    channel.close();
  }
}
