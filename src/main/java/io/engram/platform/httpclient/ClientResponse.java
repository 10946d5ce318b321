package io.engram.platform.httpclient;

import io.engram.platform.io.BlockInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.Optional;

/**
 * A response whose head has arrived; its body is read from {@link #body()}. Reading the body to its
 * end hands the connection back for the next request; closing it earlier drops the connection
 * (after a short wait for the rest, which usually is the end of a chunked body already on its way).
 */
public final class ClientResponse implements AutoCloseable {
  /** How long closing waits for the rest of a body before dropping the connection instead. */
  static final int DRAIN_TIMEOUT_MILLIS = 10;

  static final int DRAIN_LIMIT_BYTES = 64 * 1024;

  private final OriginClient client;
  private final ClientConnection connection;
  private final ResponseHead head;
  private final boolean reusable;
  private final InputStream body;
  private volatile boolean aborted;
  /** Handed back to the client: an abort coming late must not close what another request now uses. */
  private boolean released;

  private boolean ended;
  private boolean closed;

  ClientResponse(OriginClient client, ClientConnection connection, ResponseHead head)
      throws IOException {
    this.client = client;
    this.connection = connection;
    this.head = head;
    List<String> codings = head.tokens("transfer-encoding");
    Optional<String> length = head.header("content-length");
    boolean noBody = head.status() == 204 || head.status() == 304;
    InputStream framed;
    boolean delimited = true;
    if (noBody) {
      framed = InputStream.nullInputStream();
    } else if (!codings.isEmpty()) {
      if (!codings.getLast().equals("chunked")) {
        throw new MalformedResponseException(
            "unsupported transfer coding: " + String.join(", ", codings));
      }
      framed = new ChunkedBody(connection);
    } else if (length.isPresent()) {
      framed = new FixedLengthBody(connection.input(), contentLength(length.get()));
    } else {
      framed = connection.input();
      delimited = false;
    }
    this.reusable =
        delimited && head.minorVersion() >= 1 && !head.tokens("connection").contains("close");
    this.body = new Body(framed);
    this.ended = noBody;
  }

  private static long contentLength(String value) throws MalformedResponseException {
    if (value.isEmpty()
        || value.length() > 18
        || !value.chars().allMatch(c -> c >= '0' && c <= '9')) {
      throw new MalformedResponseException("not a Content-Length: " + value);
    }
    return Long.parseLong(value);
  }

  public int status() {
    return head.status();
  }

  public Optional<String> header(String name) {
    return head.header(name);
  }

  /** The decoded body; a read blocked longer than the read timeout throws SocketTimeoutException. */
  public InputStream body() {
    return body;
  }

  /** Closes the connection at once, from any thread: a read blocked on the body fails. */
  public void abort() {
    synchronized (this) {
      if (released || aborted) {
        return;
      }
      aborted = true;
    }
    connection.close();
  }

  public boolean aborted() {
    return aborted;
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (!ended && reusable && !aborted) {
      drain();
    }
    synchronized (this) {
      released = ended && reusable && !aborted;
    }
    if (released) {
      client.release(connection);
    } else {
      connection.close();
    }
  }

  private void drain() {
    try {
      connection.readTimeout(DRAIN_TIMEOUT_MILLIS);
      byte[] buffer = new byte[8 * 1024];
      long drained = 0;
      while (!ended && drained <= DRAIN_LIMIT_BYTES) {
        int read = body.read(buffer);
        drained += Math.max(read, 0);
      }
      connection.restoreReadTimeout();
    } catch (IOException e) {
      // Not there within the wait (or broken): the connection is dropped, not reused.
      ended = false;
    }
  }

  /** Notes the end of the body; a failure while reading it makes the connection unusable. */
  private final class Body extends BlockInputStream {
    private final InputStream framed;
    private boolean broken;

    Body(InputStream framed) {
      this.framed = framed;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (ended) {
        return -1;
      }
      if (len == 0) {
        return 0; // InputStream's contract; a chunked body would otherwise block on the next size
        // line
      }
      if (broken) {
        throw new IOException("the response body failed earlier");
      }
      try {
        int read = framed.read(b, off, len);
        if (read < 0) {
          ended = true;
        }
        return read;
      } catch (IOException e) {
        broken = true;
        throw e;
      }
    }

    @Override
    public int available() throws IOException {
      return ended ? 0 : framed.available();
    }

    @Override
    public void close() {
      ClientResponse.this.close();
    }
  }
}
