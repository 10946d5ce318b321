package io.engram.platform.httpclient;

import io.engram.platform.io.BlockInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;

/** A body in the chunked transfer coding: size lines (extensions ignored), data, trailers. */
final class ChunkedBody extends BlockInputStream {
  private static final int MAX_TRAILERS = 100;
  private static final long SIZE_NEXT = -1;
  private static final long FINISHED = -2;
  /** A chunk's data was read; its line end is read at the next call, not held back waiting for it. */
  private static final long LINE_END_NEXT = -3;

  private final ClientConnection connection;
  private final InputStream in;
  /** Bytes left in the current chunk, or one of the states above. */
  private long remaining = SIZE_NEXT;

  ChunkedBody(ClientConnection connection) {
    this.connection = connection;
    this.in = connection.input();
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    if (remaining == LINE_END_NEXT) {
      if (!connection.requireLine("a chunked body").isEmpty()) {
        throw new MalformedResponseException("a chunk longer than its declared size");
      }
      remaining = SIZE_NEXT;
    }
    if (remaining == SIZE_NEXT) {
      remaining = nextChunkSize();
      if (remaining == 0) {
        skipTrailers();
        remaining = FINISHED;
      }
    }
    if (remaining == FINISHED) {
      return -1;
    }
    int read = in.read(b, off, (int) Math.min(len, remaining));
    if (read < 0) {
      throw new EOFException("the connection closed inside a chunk");
    }
    remaining -= read;
    if (remaining == 0) {
      remaining = LINE_END_NEXT;
    }
    return read;
  }

  private long nextChunkSize() throws IOException {
    String line = connection.requireLine("a chunked body");
    int end = line.indexOf(';');
    String hex = (end < 0 ? line : line.substring(0, end)).strip();
    if (hex.isEmpty() || hex.length() > 15) {
      throw new MalformedResponseException("not a chunk size: " + hex);
    }
    long size = 0;
    for (int i = 0; i < hex.length(); i++) {
      int digit = Character.digit(hex.charAt(i), 16); // lines are ISO-8859-1: ASCII digits only
      if (digit < 0) {
        throw new MalformedResponseException("not a chunk size: " + hex);
      }
      size = size * 16 + digit;
    }
    return size;
  }

  private void skipTrailers() throws IOException {
    for (int count = 0;
        !connection.requireLine("the trailers of a chunked body").isEmpty();
        count++) {
      if (count == MAX_TRAILERS) {
        throw new MalformedResponseException("more than " + MAX_TRAILERS + " trailer lines");
      }
    }
  }

  @Override
  public int available() throws IOException {
    return remaining > 0 ? (int) Math.min(in.available(), remaining) : 0;
  }
}
