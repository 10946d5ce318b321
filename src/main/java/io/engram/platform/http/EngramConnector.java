package io.engram.platform.http;

import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpCompliance;
import org.eclipse.jetty.http.HttpParser;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.internal.HttpConnection;

/**
 * The server's HTTP/1.1 connector. It differs from Jetty's default in one place: an encoded NUL
 * ({@code %00}) in the path. Jetty's URI parser throws on it before the request has a path, so the
 * error page could not know the route family and answered every such request in the /v1 shape.
 * Here the NUL is turned into another control character ({@code %01}) before parsing: the URI
 * then parses, and the server's first filter refuses a control character in the path with the
 * path known, in the family's shape ({@code HttpServer.refuseControlCharacters}). The request is
 * refused either way; only the shape of the refusal changes. The query is left alone: a NUL there
 * reaches the same filter as it is.
 */
final class EngramConnector {
  private EngramConnector() {}

  /**
   * The longest request line and headers Jetty parses. Well above {@link #MAX_URI_BYTES}: a URI
   * too long is then refused by the server itself, in its route family's shape (Jetty's own 414
   * comes before the path is known, so it could only take the /v1 shape).
   */
  static final int REQUEST_HEADER_BYTES = 64 * 1024;

  /** The longest URI (path and query) a request may have: longer is a 414. */
  static final int MAX_URI_BYTES = 8 * 1024;

  static ServerConnector create(Server server, HttpConfiguration http, String host, int port) {
    http.setRequestHeaderSize(REQUEST_HEADER_BYTES);
    // HTTP/2 in clear text beside HTTP/1.1 on the plain port: a client that starts with the
    // HTTP/2 preface (prior knowledge) or asks with Upgrade: h2c speaks HTTP/2 (the TLS port
    // negotiates it by ALPN).
    ServerConnector connector = new ServerConnector(
        server,
        new NulAwareHttp(http),
        new org.eclipse.jetty.http2.server.HTTP2CServerConnectionFactory(http));
    connector.setHost(host);
    connector.setPort(port);
    return connector;
  }

  /** The request target with every {@code %00} of its path made {@code %01}. */
  static String withoutEncodedNul(String target) {
    int query = target.indexOf('?');
    String path = query < 0 ? target : target.substring(0, query);
    if (!path.contains("%00")) {
      return target;
    }
    return path.replace("%00", "%01") + (query < 0 ? "" : target.substring(query));
  }

  /**
   * The connection attribute holding the {@link RouteFamily} of the request line being parsed, read
   * from its first bytes before Jetty parses it: a request Jetty refuses before it has a path (a
   * URI longer than it parses, a path above the root) still gets its family's error shape.
   */
  static final String FAMILY = "engram.routeFamily";

  /** The family of the request line at the start of {@code buffer}, or null when none shows yet. */
  static RouteFamily familyOf(ByteBuffer buffer) {
    int at = buffer.position();
    int end = buffer.limit();
    while (at < end && (buffer.get(at) == '\r' || buffer.get(at) == '\n')) {
      at++;
    }
    while (at < end && buffer.get(at) != ' ') {
      at++; // the method
    }
    StringBuilder path = new StringBuilder();
    for (at++; at < end && path.length() < 32; at++) {
      byte b = buffer.get(at);
      if (b == ' ' || b == '?' || b == '\r' || b == '\n') {
        break;
      }
      path.append((char) b);
    }
    return path.isEmpty() || path.charAt(0) != '/' ? null : RouteFamily.of(path.toString());
  }

  private static final class NulAwareHttp extends HttpConnectionFactory {
    NulAwareHttp(HttpConfiguration config) {
      super(config);
    }

    @Override
    public Connection newConnection(Connector connector, EndPoint endPoint) {
      HttpConnection connection = new HttpConnection(getHttpConfiguration(), connector, endPoint) {
        @Override
        protected HttpStreamOverHTTP1 newHttpStream(
            String method, String target, HttpVersion version) {
          return super.newHttpStream(method, withoutEncodedNul(target), version);
        }

        /**
         * The handler Jetty's constructor made just before it asks for the parser: the parser
         * must report to that one (the connection reads its failure). No initializer: it is set
         * while the superclass constructs.
         */
        private RequestHandler handler;

        @Override
        protected RequestHandler newRequestHandler() {
          handler = super.newRequestHandler();
          return handler;
        }

        @Override
        protected HttpParser newHttpParser(HttpCompliance compliance) {
          HttpConnection self = this;
          HttpParser parser =
              new HttpParser(handler, getHttpConfiguration().getRequestHeaderSize(), compliance) {
                @Override
                public boolean parseNext(ByteBuffer buffer) {
                  if (getState() == State.START && buffer.hasRemaining()) {
                    RouteFamily family = familyOf(buffer);
                    if (family == null) {
                      self.removeAttribute(FAMILY);
                    } else {
                      self.setAttribute(FAMILY, family);
                    }
                  }
                  return super.parseNext(buffer);
                }
              };
          parser.setHeaderCacheSize(getHttpConfiguration().getHeaderCacheSize());
          parser.setHeaderCacheCaseSensitive(getHttpConfiguration().isHeaderCacheCaseSensitive());
          return parser;
        }
      };
      connection.setTransferEncodingChunkMaxLength(getTransferEncodingChunkMaxLength());
      return configure(connection, connector, endPoint);
    }
  }
}
