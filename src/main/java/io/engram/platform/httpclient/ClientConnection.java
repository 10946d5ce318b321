package io.engram.platform.httpclient;

import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One socket to the origin: writes a request, reads a response head, and lends its input to a
 * body. Every read that waits for the socket is bounded by the read timeout in force, kept by
 * {@link ReadDeadlines} (the socket itself has none).
 */
final class ClientConnection {
  static final int MAX_LINE = 16 * 1024;
  static final int MAX_HEADERS = 200;

  private final Socket socket;
  /** The TCP socket under a TLS one (or the socket itself): closed to end a read that timed out. */
  private final Socket transport;

  private final int readTimeoutMillis;
  private final InputStream in;
  private final OutputStream out;
  private boolean received;
  private long idleSince;
  /** The read timeout in force (0: none); the client's, or a request's own for a while. */
  private volatile int timeoutMillis;
  /** When the read waiting now expires ({@link System#nanoTime}), while {@link #reading}. */
  private volatile long readDeadline;

  private volatile boolean reading;

  private volatile boolean timedOut;

  ClientConnection(Socket socket, Socket transport, int readTimeoutMillis) throws IOException {
    this.socket = socket;
    this.transport = transport;
    this.readTimeoutMillis = readTimeoutMillis;
    this.timeoutMillis = readTimeoutMillis;
    this.in = new BufferedInputStream(new Timed(socket.getInputStream()), 16 * 1024);
    this.out = socket.getOutputStream();
  }

  /** The socket's input, each read given the timeout in force. */
  private final class Timed extends InputStream {
    private final InputStream socketInput;

    Timed(InputStream socketInput) {
      this.socketInput = socketInput;
    }

    @Override
    public int read() throws IOException {
      byte[] one = new byte[1];
      return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] buffer, int offset, int length) throws IOException {
      int timeout = timeoutMillis;
      if (timeout > 0) {
        readDeadline = System.nanoTime() + timeout * 1_000_000L;
        reading = true; // after the deadline: the watchdog reads them in the other order
        ReadDeadlines.watch(ClientConnection.this);
      }
      try {
        return socketInput.read(buffer, offset, length);
      } catch (IOException e) {
        if (timedOut) {
          throw new SocketTimeoutException("Read timed out (no byte within " + timeout + " ms)");
        }
        throw e;
      } finally {
        reading = false;
        ReadDeadlines.forget(ClientConnection.this);
      }
    }

    @Override
    public int available() throws IOException {
      return socketInput.available();
    }
  }

  /** The watchdog's check: a read waiting past its deadline ends, as a timeout, by the close. */
  void closeIfReadExpired(long now) {
    if (reading && now - readDeadline > 0) {
      timedOut = true;
      // The TCP socket, not a TLS one: closing TLS writes its close message, which must not wait.
      try {
        transport.close();
      } catch (IOException ignored) {
        // Closed already: the read ends either way.
      }
    }
  }

  void write(byte[] head, byte[] body) throws IOException {
    received = false;
    if (head.length + body.length <= 64 * 1024) {
      byte[] request = new byte[head.length + body.length];
      System.arraycopy(head, 0, request, 0, head.length);
      System.arraycopy(body, 0, request, head.length, body.length);
      out.write(request);
    } else {
      out.write(head);
      out.write(body);
    }
    out.flush();
  }

  /** Whether any byte of an answer came on this request (if none did, the server never saw it). */
  boolean received() {
    return received;
  }

  /** The status line and headers of the final response, skipping interim (1xx) ones. */
  ResponseHead readHead() throws IOException {
    while (true) {
      String statusLine = readLine();
      if (statusLine == null) {
        throw new EOFException("the connection closed before a response");
      }
      ResponseHead head = ResponseHead.parseStatus(statusLine);
      List<String> lines = new ArrayList<>();
      String line;
      while (!(line = requireLine("a response head")).isEmpty()) {
        if (lines.size() == MAX_HEADERS) {
          throw new MalformedResponseException("more than " + MAX_HEADERS + " response headers");
        }
        lines.add(line);
      }
      head = head.withHeaders(lines);
      if (head.status() == 101) {
        throw new MalformedResponseException("a protocol switch (101) that was not asked for");
      }
      if (head.status() >= 200) {
        return head;
      }
    }
  }

  /** The next line; EOFException naming {@code where} the connection closed when there is none. */
  String requireLine(String where) throws IOException {
    String line = readLine();
    if (line == null) {
      throw new EOFException("the connection closed inside " + where);
    }
    return line;
  }

  /** A CRLF- (or LF-) ended line in ISO-8859-1; null at end of stream before any byte. */
  String readLine() throws IOException {
    byte[] buffer = new byte[128];
    int length = 0;
    int b;
    while ((b = in.read()) >= 0) {
      received = true;
      if (b == '\n') {
        if (length > 0 && buffer[length - 1] == '\r') {
          length--;
        }
        return new String(buffer, 0, length, StandardCharsets.ISO_8859_1);
      }
      if (length == MAX_LINE) {
        throw new MalformedResponseException("a response line longer than " + MAX_LINE + " bytes");
      }
      if (length == buffer.length) {
        buffer = Arrays.copyOf(buffer, Math.min(MAX_LINE, length * 2));
      }
      buffer[length++] = (byte) b;
    }
    if (length > 0) {
      throw new EOFException("the connection closed inside a line");
    }
    return null;
  }

  /** Another read timeout for a while (a request's own, the wait for the rest of a body). */
  void readTimeout(int millis) {
    timeoutMillis = millis;
  }

  void restoreReadTimeout() {
    timeoutMillis = readTimeoutMillis;
  }

  InputStream input() {
    return in;
  }

  void markIdle() {
    idleSince = System.nanoTime();
  }

  long idleSince() {
    return idleSince;
  }

  /** Closes the socket; from another thread, this makes a blocked read fail at once. */
  void close() {
    try {
      socket.close();
    } catch (IOException ignored) {
      // Closing: nothing left to do with it.
    }
  }
}
