package io.engram.platform.httpclient;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Deque;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

/**
 * A blocking HTTP/1.1 client for one origin (the upstream model server), with kept-alive
 * connections. It replaces {@code java.net.http.HttpClient} on the relay path, where that client's
 * asynchronous machinery (schedulers, selector hand-offs, a timer per request) was the largest
 * share of the gateway's CPU time per request (docs/decisions.md). Calls block on virtual threads;
 * the read timeout is the one timer: it bounds the wait for the answer and every silence inside a
 * streamed body (kept by {@link ReadDeadlines}, not by the socket).
 */
public final class OriginClient implements AutoCloseable {
  static final int MAX_IDLE_CONNECTIONS = 64;
  /** Idle longer than this, a connection is closed rather than reused (a stale one is retried anyway). */
  static final long MAX_IDLE_NANOS = Duration.ofSeconds(30).toNanos();

  private final String host;
  private final int port;
  private final String hostHeader;
  private final SSLSocketFactory tls;
  private final int connectTimeoutMillis;
  private final int readTimeoutMillis;
  private final Deque<ClientConnection> idle = new ConcurrentLinkedDeque<>();
  private final AtomicInteger idleCount = new AtomicInteger();
  private final AtomicInteger opened = new AtomicInteger();
  private volatile boolean closed;

  /**
   * @param origin      scheme, host and port ({@code http} or {@code https}); a path is ignored
   * @param tls         socket factory for {@code https}; null: the JVM's default trust
   * @param readTimeout the longest wait for any byte of the answer
   */
  public OriginClient(
      URI origin, Duration connectTimeout, Duration readTimeout, SSLSocketFactory tls) {
    String scheme = origin.getScheme() == null ? "" : origin.getScheme().toLowerCase();
    if (!scheme.equals("http") && !scheme.equals("https") || origin.getHost() == null) {
      throw new IllegalArgumentException("expected an http or https URL with a host: " + origin);
    }
    boolean secure = scheme.equals("https");
    int defaultPort = secure ? 443 : 80;
    this.port = origin.getPort() < 0 ? defaultPort : origin.getPort();
    String uriHost = origin.getHost();
    this.host = uriHost.startsWith("[") ? uriHost.substring(1, uriHost.length() - 1) : uriHost;
    this.hostHeader = port == defaultPort ? uriHost : uriHost + ":" + port;
    this.tls =
        secure ? (tls == null ? (SSLSocketFactory) SSLSocketFactory.getDefault() : tls) : null;
    this.connectTimeoutMillis = (int) Math.min(Integer.MAX_VALUE, connectTimeout.toMillis());
    this.readTimeoutMillis = (int) Math.min(Integer.MAX_VALUE, readTimeout.toMillis());
  }

  /**
   * Sends a request and returns once the response's head has arrived. A kept-alive connection the
   * server closed while idle fails before any byte of an answer; the request is then sent again on
   * another connection (the server cannot have acted on it).
   *
   * @param headers name, value, name, value...; Host and Content-Length are set here
   * @throws UnreachableException when no connection could be made
   * @throws SocketTimeoutException when the answer did not start within the read timeout
   */
  public ClientResponse send(String method, String target, String[] headers, byte[] body)
      throws IOException {
    return send(method, target, headers, body, null);
  }

  /**
   * {@link #send(String, String, String[], byte[])} with this request's own read timeout (null:
   * the client's): the longest wait for the answer's first byte and between its bytes.
   */
  public ClientResponse send(
      String method, String target, String[] headers, byte[] body, Duration readTimeout)
      throws IOException {
    byte[] head = requestHead(method, target, headers, body.length);
    while (true) {
      ClientConnection connection = takeIdle();
      boolean reused = connection != null;
      if (!reused) {
        connection = open();
      }
      try {
        if (readTimeout != null) {
          connection.readTimeout((int) Math.min(Integer.MAX_VALUE, readTimeout.toMillis()));
        }
        connection.write(head, body);
        return new ClientResponse(this, connection, connection.readHead());
      } catch (IOException e) {
        connection.close();
        if (reused && !connection.received() && !(e instanceof SocketTimeoutException)) {
          continue;
        }
        throw e;
      }
    }
  }

  private byte[] requestHead(String method, String target, String[] headers, int length) {
    StringBuilder head = new StringBuilder(256)
        .append(method)
        .append(' ')
        .append(target)
        .append(" HTTP/1.1\r\n")
        .append("Host: ")
        .append(hostHeader)
        .append("\r\n");
    for (int i = 0; i < headers.length; i += 2) {
      head.append(requireToken(headers[i]))
          .append(": ")
          .append(requireValue(headers[i + 1]))
          .append("\r\n");
    }
    head.append("Content-Length: ").append(length).append("\r\n\r\n");
    return head.toString().getBytes(StandardCharsets.UTF_8);
  }

  private static String requireToken(String name) {
    boolean token = !name.isEmpty();
    for (int i = 0; i < name.length() && token; i++) {
      char c = name.charAt(i);
      token = c > 32 && c < 127 && c != ':';
    }
    if (!token) {
      throw new IllegalArgumentException("not a header name: " + name);
    }
    return name;
  }

  private static String requireValue(String value) {
    if (value.indexOf('\r') >= 0 || value.indexOf('\n') >= 0) {
      throw new IllegalArgumentException("a header value must not contain a line break");
    }
    return value;
  }

  private ClientConnection takeIdle() {
    ClientConnection connection;
    while ((connection = idle.pollFirst()) != null) {
      idleCount.decrementAndGet();
      if (System.nanoTime() - connection.idleSince() < MAX_IDLE_NANOS) {
        return connection;
      }
      connection.close();
    }
    return null;
  }

  private ClientConnection open() throws IOException {
    Socket socket = new Socket();
    Socket transport = socket;
    try {
      socket.setTcpNoDelay(true);
      socket.setKeepAlive(true);
      socket.connect(new InetSocketAddress(host, port), connectTimeoutMillis);
      if (tls != null) {
        socket.setSoTimeout(connectTimeoutMillis);
        SSLSocket secure = (SSLSocket) tls.createSocket(socket, host, port, true);
        SSLParameters parameters = secure.getSSLParameters();
        parameters.setEndpointIdentificationAlgorithm("HTTPS");
        secure.setSSLParameters(parameters);
        secure.startHandshake();
        socket = secure;
      }
      socket.setSoTimeout(0); // the handshake's; reads are bounded by ReadDeadlines
      opened.incrementAndGet();
      return new ClientConnection(socket, transport, readTimeoutMillis);
    } catch (IOException e) {
      socket.close();
      throw new UnreachableException(host + ":" + port, e);
    }
  }

  /** A response's body was read to its end: the connection serves the next request. */
  void release(ClientConnection connection) {
    if (closed || idleCount.incrementAndGet() > MAX_IDLE_CONNECTIONS) {
      idleCount.decrementAndGet();
      connection.close();
      return;
    }
    connection.restoreReadTimeout(); // a request may have had its own
    connection.markIdle();
    idle.offerFirst(connection);
    if (closed) {
      closeIdle();
    }
  }

  /** Connections opened so far (for tests of connection reuse). */
  public int connectionsOpened() {
    return opened.get();
  }

  private void closeIdle() {
    ClientConnection connection;
    while ((connection = idle.pollFirst()) != null) {
      idleCount.decrementAndGet();
      connection.close();
    }
  }

  @Override
  public void close() {
    closed = true;
    closeIdle();
  }
}
