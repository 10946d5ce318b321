package io.engram.platform.http;

import io.engram.platform.io.BlockInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A streaming multipart/form-data reader (RFC 7578) for uploads too large for memory: each part's
 * content is read straight from the request, so a caller can write a file of any size to disk
 * while counting it. The whole request is held to {@code maxBytes}, checked as the bytes arrive
 * (a chunked request declares no length). Malformed input is a 400, an oversized one a 413.
 */
public final class MultipartReader {
  private static final int BUFFER = 64 * 1024;
  private static final int MAX_HEADERS = 16 * 1024;
  private static final Pattern BOUNDARY =
      Pattern.compile("(?i)boundary=(?:\"([^\"]{1,70})\"|([^;\\s]{1,70}))");
  private static final Pattern DISPOSITION_PARAM =
      Pattern.compile("(?i);\\s*(name|filename)=(?:\"((?:[^\"\\\\]|\\\\.)*)\"|([^;\\s]*))");

  /** One part's headers; its content is read with {@link #content()} before the next part is asked for. */
  public record Part(String name, String filename, String contentType) {
    public boolean isFile() {
      return filename != null;
    }
  }

  private final InputStream in;
  private final byte[] delimiter;
  private final long maxBytes;
  private final Supplier<ApiException> tooLarge;
  private final byte[] buffer;
  private int position;
  private int limit;
  private long consumed;
  private boolean finished;
  private boolean inPart;

  private MultipartReader(
      InputStream in, String boundary, long maxBytes, Supplier<ApiException> tooLarge) {
    this.in = in;
    this.tooLarge = tooLarge;
    this.delimiter = ("\r\n--" + boundary).getBytes(StandardCharsets.US_ASCII);
    this.maxBytes = maxBytes;
    this.buffer = new byte[BUFFER + delimiter.length];
    // The body starts with "--boundary"; a virtual CRLF before it makes every delimiter alike.
    buffer[0] = '\r';
    buffer[1] = '\n';
    limit = 2;
  }

  /**
   * A reader of a multipart/form-data body: 415 when the content type is another, 400 when it
   * names no boundary; {@code tooLarge} is thrown once more than {@code maxBytes} arrive.
   */
  public static MultipartReader of(
      String contentType, InputStream body, long maxBytes, Supplier<ApiException> tooLarge) {
    if (contentType == null
        || !contentType.toLowerCase(Locale.ROOT).startsWith("multipart/form-data")) {
      throw ApiException.unsupportedMediaType("multipart/form-data", contentType);
    }
    Matcher boundary = BOUNDARY.matcher(contentType);
    if (!boundary.find()) {
      throw ApiException.badRequest(null, "The multipart/form-data Content-Type names no boundary");
    }
    String value = boundary.group(1) != null ? boundary.group(1) : boundary.group(2);
    return new MultipartReader(body, value, maxBytes, tooLarge);
  }

  public static ApiException tooLarge(long maxBytes, String what) {
    return ApiException.tooLarge("The upload exceeds " + what + " (" + maxBytes + " bytes)");
  }

  /** The next part, or empty after the last one. A part's unread content is skipped. */
  public Optional<Part> next() throws IOException {
    if (finished) {
      return Optional.empty();
    }
    if (inPart) {
      content().transferTo(OutputStream.nullOutputStream());
    }
    if (!skipToDelimiter()) {
      throw malformed("the body ends before its closing boundary");
    }
    byte[] after = take(2);
    if (after[0] == '-' && after[1] == '-') {
      finished = true;
      return Optional.empty();
    }
    if (after[0] != '\r' || after[1] != '\n') {
      throw malformed("a boundary is not followed by a line break");
    }
    Part part = headers();
    inPart = true;
    return Optional.of(part);
  }

  /** The current part's content, ending where the next boundary begins. */
  public InputStream content() {
    return new BlockInputStream() {
      @Override
      public int read(byte[] target, int offset, int length) throws IOException {
        if (!inPart) {
          return -1;
        }
        while (true) {
          int found = indexOfDelimiter();
          if (found == position) {
            inPart = false;
            return -1;
          }
          int safe = found >= 0 ? found : limit - (delimiter.length - 1);
          if (safe > position) {
            int n = Math.min(length, safe - position);
            System.arraycopy(buffer, position, target, offset, n);
            position += n;
            return n;
          }
          if (!fill()) {
            throw malformed("the body ends inside a part");
          }
        }
      }
    };
  }

  /** Reads a text field's value, at most {@code maxChars} bytes of UTF-8. */
  public String text(String field, int maxChars) throws IOException {
    byte[] value = content().readNBytes(maxChars + 1);
    if (value.length > maxChars) {
      throw ApiException.badRequest(field, "'" + field + "' is longer than " + maxChars + " bytes");
    }
    return new String(value, StandardCharsets.UTF_8);
  }

  private boolean skipToDelimiter() throws IOException {
    while (true) {
      int found = indexOfDelimiter();
      if (found >= 0) {
        position = found + delimiter.length;
        return true;
      }
      position = Math.max(position, limit - (delimiter.length - 1));
      if (!fill()) {
        return false;
      }
    }
  }

  private Part headers() throws IOException {
    Map<String, String> headers = new LinkedHashMap<>();
    int read = 0;
    while (true) {
      String line = line();
      read += line.length() + 2;
      if (read > MAX_HEADERS) {
        throw malformed("a part's headers are longer than " + MAX_HEADERS + " bytes");
      }
      if (line.isEmpty()) {
        break;
      }
      int colon = line.indexOf(':');
      if (colon <= 0) {
        throw malformed("a part header has no name: '" + line + "'");
      }
      headers.put(
          line.substring(0, colon).trim().toLowerCase(Locale.ROOT),
          line.substring(colon + 1).trim());
    }
    String disposition = headers.get("content-disposition");
    if (disposition == null || !disposition.toLowerCase(Locale.ROOT).startsWith("form-data")) {
      throw malformed("every part needs 'Content-Disposition: form-data; name=...'");
    }
    String name = null;
    String filename = null;
    Matcher params = DISPOSITION_PARAM.matcher(disposition);
    while (params.find()) {
      String value =
          params.group(2) != null ? params.group(2).replaceAll("\\\\(.)", "$1") : params.group(3);
      if (params.group(1).equalsIgnoreCase("name")) {
        name = value;
      } else {
        filename = value;
      }
    }
    if (name == null || name.isEmpty()) {
      throw malformed("a part's Content-Disposition has no name");
    }
    return new Part(name, filename, headers.get("content-type"));
  }

  private String line() throws IOException {
    StringBuilder line = new StringBuilder();
    while (true) {
      if (position == limit && !fill()) {
        throw malformed("the body ends inside a part's headers");
      }
      byte b = buffer[position++];
      if (b == '\n' && !line.isEmpty() && line.charAt(line.length() - 1) == '\r') {
        line.setLength(line.length() - 1);
        return line.toString();
      }
      line.append((char) (b & 0xff));
      if (line.length() > MAX_HEADERS) {
        throw malformed("a part's headers are longer than " + MAX_HEADERS + " bytes");
      }
    }
  }

  private byte[] take(int n) throws IOException {
    while (limit - position < n) {
      if (!fill()) {
        throw malformed("the body ends after a boundary");
      }
    }
    byte[] taken = Arrays.copyOfRange(buffer, position, position + n);
    position += n;
    return taken;
  }

  /** The delimiter's index in the unread buffer, or -1. */
  private int indexOfDelimiter() {
    outer:
    for (int i = position; i <= limit - delimiter.length; i++) {
      for (int j = 0; j < delimiter.length; j++) {
        if (buffer[i + j] != delimiter[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }

  /** Moves the unread bytes to the front and reads more; false at the end of the body. */
  private boolean fill() throws IOException {
    if (position > 0) {
      System.arraycopy(buffer, position, buffer, 0, limit - position);
      limit -= position;
      position = 0;
    }
    if (limit == buffer.length) {
      return true;
    }
    int n = in.read(buffer, limit, buffer.length - limit);
    if (n < 0) {
      return false;
    }
    consumed += n;
    if (consumed > maxBytes) {
      throw tooLarge.get();
    }
    limit += n;
    return true;
  }

  private static ApiException malformed(String why) {
    return ApiException.badRequest(null, "Malformed multipart/form-data body: " + why);
  }
}
