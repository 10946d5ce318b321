package io.engram.platform.http;

import io.engram.platform.json.Json;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/**
 * The answers the servlet container gives before a request reaches a route, in the JSON error
 * shapes of the routes instead of Jetty's HTML page. A request line Jetty cannot parse leaves it
 * no path ({@code /badMessage}): its family is then the one {@link EngramConnector} read from the
 * line's first bytes ({@link EngramConnector#FAMILY}), else the /v1 shape.
 */
final class ContainerErrors extends ErrorHandler {

  /**
   * Every method gets its body: Jetty writes one only for GET, POST and HEAD by default, so a
   * DELETE or PATCH it refused (a path it cannot decode) was a 400 with an empty body.
   */
  @Override
  public boolean errorPageForMethod(String method) {
    return true;
  }

  @Override
  protected void generateResponse(
      Request request,
      Response response,
      int code,
      String message,
      Throwable cause,
      Callback callback) {
    ApiException error = code >= 500
        ? ApiException.internal()
        : ApiException.of(
            code,
            ErrorType.INVALID_REQUEST_ERROR,
            code == 400 ? "invalid_request" : "http_" + code,
            message == null || message.isBlank() ? ErrorResponses.title(code) : message,
            null);
    Object peeked = request.getConnectionMetaData().getAttribute(EngramConnector.FAMILY);
    String path = request.getHttpURI().getPath();
    RouteFamily family =
        peeked instanceof RouteFamily read ? read : RouteFamily.of(path == null ? "/" : path);
    Map<String, Object> body = ErrorResponses.body(family, error);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
    response.write(
        true, ByteBuffer.wrap(Json.write(body).getBytes(StandardCharsets.UTF_8)), callback);
  }
}
