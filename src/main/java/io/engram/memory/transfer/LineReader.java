package io.engram.memory.transfer;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * The lines of a UTF-8 stream (JSON Lines), each without its {@code \n} or {@code \r\n}, and no
 * longer than a limit in bytes: one line without an end can never take the heap. Bytes that are not UTF-8
 * are a mistake, never read as replacement characters.
 */
final class LineReader implements Closeable {
  /** A line longer than the limit; {@code line} is its number, from 1. */
  static final class TooLong extends IOException {
    private final int line;

    TooLong(int line) {
      super("line " + line + " is too long", null);
      this.line = line;
    }

    int line() {
      return line;
    }
  }

  /** Bytes on line {@code line} that are not UTF-8. */
  static final class NotUtf8 extends IOException {
    private final int line;

    NotUtf8(int line, Throwable cause) {
      super("line " + line + " is not UTF-8", cause);
      this.line = line;
    }

    int line() {
      return line;
    }
  }

  private final InputStream in;
  private final int maxBytes;
  private final byte[] buffer = new byte[64 * 1024];
  private final java.io.ByteArrayOutputStream line = new java.io.ByteArrayOutputStream();
  private final CharsetDecoder utf8 = StandardCharsets.UTF_8
      .newDecoder()
      .onMalformedInput(CodingErrorAction.REPORT)
      .onUnmappableCharacter(CodingErrorAction.REPORT);
  private int position;
  private int limit;
  private int number;

  /** {@code maxBytes}: the longest line, in UTF-8 bytes. */
  LineReader(InputStream in, int maxBytes) {
    this.in = in;
    this.maxBytes = maxBytes;
  }

  /**
   * The next line, or null at the end of the stream. A {@code \n} byte is never part of a
   * multi-byte character, so lines are cut on bytes and each decoded whole (exact line numbers).
   */
  String next() throws IOException {
    line.reset();
    number++;
    while (true) {
      if (position == limit && !fill()) {
        return line.size() == 0 ? null : decoded();
      }
      int start = position;
      while (position < limit && buffer[position] != '\n') {
        position++;
      }
      line.write(buffer, start, position - start);
      if (line.size() > maxBytes + 1) {
        throw new TooLong(number);
      }
      if (position < limit) {
        position++; // the '\n'
        return decoded();
      }
    }
  }

  private String decoded() throws IOException {
    byte[] bytes = line.toByteArray();
    int length = bytes.length;
    if (length > 0 && bytes[length - 1] == '\r') {
      length--;
    }
    if (length > maxBytes) {
      throw new TooLong(number);
    }
    try {
      return utf8.decode(java.nio.ByteBuffer.wrap(bytes, 0, length)).toString();
    } catch (CharacterCodingException e) {
      throw new NotUtf8(number, e);
    }
  }

  private boolean fill() throws IOException {
    limit = Math.max(0, in.read(buffer));
    position = 0;
    return limit > 0;
  }

  @Override
  public void close() throws IOException {
    in.close();
  }
}
