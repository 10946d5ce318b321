package io.engram.operations;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.access.Requires;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.ValidationError;
import io.engram.platform.json.Json;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Each failure in its route family's shape: /v1 OpenAI-style, /api the product shape. */
class ErrorShapeTest {
  static TestServer server;
  static Http http;

  @BeforeAll
  static void start() {
    server = TestServer.builder()
        .env("ENGRAM_MAX_BODY_BYTES", "2048")
        .probe(routes -> routes
            .get("/v1/probe/boom", Requires.anyone(), ctx -> {
              throw new IllegalStateException("secret internal detail");
            })
            .get("/api/probe/boom", Requires.anyone(), ctx -> {
              throw new IllegalStateException("secret internal detail");
            })
            .post("/api/probe/invalid", Requires.anyone(), ctx -> {
              throw ApiException.validation(List.of(
                  new ValidationError("create_orders", null, "first rule"),
                  new ValidationError(null, "capabilities", "second rule")));
            }))
        .start();
    http = server.http;
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  static void assertOpenAiShape(Http.Response response, int status, String type, String code) {
    assertThat(response.status()).as(response.text()).isEqualTo(status);
    assertThat(response.header("Content-Type")).startsWith("application/json");
    assertThat(response.header("X-Request-Id")).isNotBlank();
    JsonNode error = response.json().get("error");
    assertThat(error.get("type").asText()).isEqualTo(type);
    assertThat(error.get("code").asText()).isEqualTo(code);
    assertThat(error.get("message").asText()).isNotBlank();
    assertThat(error.has("param")).isTrue();
  }

  static void assertProductShape(Http.Response response, int status, String error) {
    assertThat(response.status()).as(response.text()).isEqualTo(status);
    assertThat(response.header("X-Request-Id")).isNotBlank();
    JsonNode body = response.json();
    assertThat(body.get("success").asBoolean()).isFalse();
    assertThat(body.get("error").asText()).isEqualTo(error);
    assertThat(body.get("message").asText()).isNotBlank();
    assertThat(body.size()).isEqualTo(3);
  }

  @Test
  void validationFailuresListEveryErrorInTheProductShape() {
    Http.Response response = http.post("/api/probe/invalid").send();
    assertThat(response.status()).isEqualTo(400);
    assertThat(response.json()).isEqualTo(Json.read("""
        {"success":false,"error":"Validation failed","validationErrors":[
          {"capabilityId":"create_orders","error":"first rule"},
          {"field":"capabilities","error":"second rule"}]}""", JsonNode.class));
  }

  @Test
  void unknownRouteIs404InEachFamily() {
    assertOpenAiShape(
        http.get("/v1/does-not-exist").send(), 404, "invalid_request_error", "route_not_found");
    // "/" is the console's sign-in page; a path outside the API and the console is not found.
    assertOpenAiShape(
        http.get("/nothing-here").send(), 404, "invalid_request_error", "route_not_found");
    assertProductShape(http.get("/api/does-not-exist").send(), 404, "Not found");
  }

  @Test
  void wrongMethodIs405InEachFamily() {
    assertOpenAiShape(
        http.method("PUT", "/v1/organizations").send(),
        405,
        "invalid_request_error",
        "method_not_allowed");
    assertProductShape(http.get("/api/auth/login").send(), 405, "Method not allowed");
  }

  @Test
  void malformedJsonIs400InEachFamily() {
    assertOpenAiShape(
        server.asOperator(http.post("/v1/organizations").json("{\"name\": ")),
        400,
        "invalid_request_error",
        "invalid_request");
    assertOpenAiShape(
        server.asOperator(http.post("/v1/organizations").json("{\"name\":\"a\",\"name\":\"b\"}")),
        400,
        "invalid_request_error",
        "invalid_request");
    assertOpenAiShape(
        server.asOperator(http.post("/v1/organizations").json("[1,2]")),
        400,
        "invalid_request_error",
        "invalid_request");
    assertProductShape(http.post("/api/auth/login").json("{nope").send(), 400, "Invalid request");
  }

  @Test
  void missingBodyIs400() {
    assertOpenAiShape(
        http.post("/v1/organizations").bearer(TestServer.ADMIN_KEY).send(),
        400,
        "invalid_request_error",
        "invalid_request");
  }

  @Test
  void oversizedBodyIs413InEachFamily() {
    String big = "{\"name\":\"" + "x".repeat(5000) + "\"}";
    assertOpenAiShape(
        server.asOperator(http.post("/v1/organizations").json(big)),
        413,
        "invalid_request_error",
        "request_too_large");
    assertProductShape(http.post("/api/auth/login").json(big).send(), 413, "Payload too large");
  }

  @Test
  void wrongContentTypeIs415InEachFamily() {
    assertOpenAiShape(
        server.asOperator(http.post("/v1/organizations").body("text/plain", "name=x")),
        415,
        "invalid_request_error",
        "unsupported_media_type");
    assertOpenAiShape(
        server.asOperator(
            http.post("/v1/organizations").body("application/x-www-form-urlencoded", "name=x")),
        415,
        "invalid_request_error",
        "unsupported_media_type");
    assertProductShape(
        http.post("/api/auth/login").body("text/plain", "x").send(), 415, "Unsupported media type");
  }

  @Test
  void anUnexpectedExceptionIs500WithoutItsDetails() {
    Http.Response v1 = http.get("/v1/probe/boom").send();
    assertOpenAiShape(v1, 500, "server_error", "internal_error");
    assertThat(v1.text())
        .doesNotContain("secret internal detail")
        .doesNotContain("IllegalStateException")
        .doesNotContain("at io.engram");
    Http.Response api = http.get("/api/probe/boom").send();
    assertProductShape(api, 500, "Internal server error");
    assertThat(api.text()).doesNotContain("secret internal detail");
  }

  @Test
  void authenticationAndPermissionFailuresUseTheProductShapeUnderApi() {
    assertProductShape(http.get("/api/auth/session").send(), 401, "Unauthorized");
    assertProductShape(
        http.get("/api/auth/session").bearer("engk_nonsense").send(), 401, "Unauthorized");
    String org = server.createOrganization("seed");
    String token = server.token(org, null, "memory:read");
    assertProductShape(http.get("/api/auth/session").bearer(token).send(), 403, "Forbidden");
    assertOpenAiShape(
        http.get("/v1/organizations/" + org).send(),
        401,
        "authentication_error",
        "missing_api_key");
  }

  @Test
  void everyResponseCarriesARequestIdAndAValidIncomingOneIsKept() {
    assertThat(http.get("/v1/health").send().header("X-Request-Id")).startsWith("req_");
    assertThat(http.get("/v1/health")
            .header("X-Request-Id", "trace-123.abc")
            .send()
            .header("X-Request-Id"))
        .isEqualTo("trace-123.abc");
    assertThat(http.get("/v1/health")
            .header("X-Request-Id", "bad id with spaces")
            .send()
            .header("X-Request-Id"))
        .startsWith("req_");
  }

  /** What Jetty refuses while parsing a request, answered as JSON in the family's shape where the path is known. */
  @Test
  void requestsTheContainerRefusesAreAnsweredAsJson() throws Exception {
    String product = raw("GET /api/assistants HTTP/1.1\r\nHost: x\r\nX-A: a\u007fb\r\n\r\n");
    assertThat(product).startsWith("HTTP/1.1 400").contains("Content-Type: application/json");
    assertThat(Json.read(product.substring(product.indexOf("\r\n\r\n") + 4), JsonNode.class)
            .get("success")
            .asBoolean())
        .isFalse();
    String openAi = raw("GET /v1/health HTTP/1.1\r\nHost: x\r\nX-A: a\u0001b\r\n\r\n");
    assertThat(openAi).startsWith("HTTP/1.1 400").contains("Content-Type: application/json");
    assertThat(Json.read(openAi.substring(openAi.indexOf("\r\n\r\n") + 4), JsonNode.class)
            .at("/error/type")
            .asText())
        .isEqualTo("invalid_request_error");
    Http.Response longUri = http.get("/v1/memory/" + "a".repeat(9_000)).send();
    assertThat(longUri.status()).isEqualTo(414);
    assertThat(longUri.json().at("/error/code").asText()).isEqualTo("http_414");
  }

  /**
   * Whatever the method, and in the /api family too: a path the container cannot decode, a URI
   * too long, a path that climbs out with {@code ../}, each answered as JSON in its family's shape.
   */
  @Test
  void everyContainerRefusalHasItsFamilysBodyWhateverTheMethod() throws Exception {
    for (String method : List.of("GET", "DELETE", "PATCH", "PUT", "POST")) {
      String openAi = raw(method + " /v1/memory/%ff%fe HTTP/1.1\r\nHost: x\r\n"
          + "Content-Length: 0\r\nConnection: close\r\n\r\n");
      assertThat(openAi).as(method).startsWith("HTTP/1.1 400").contains("application/json");
      assertThat(Json.read(openAi.substring(openAi.indexOf("\r\n\r\n") + 4), JsonNode.class)
              .at("/error/type")
              .asText())
          .as(method)
          .isEqualTo("invalid_request_error");
      String product = raw(method + " /api/assistants/%ff%fe HTTP/1.1\r\nHost: x\r\n"
          + "Content-Length: 0\r\nConnection: close\r\n\r\n");
      assertThat(product).as(method).startsWith("HTTP/1.1 400").contains("application/json");
      assertThat(Json.read(product.substring(product.indexOf("\r\n\r\n") + 4), JsonNode.class)
              .get("success")
              .asBoolean())
          .as(method)
          .isFalse();
    }
    Http.Response longApi = http.get("/api/assistants/" + "a".repeat(9_000)).send();
    assertThat(longApi.status()).isEqualTo(414);
    assertThat(longApi.json().get("success").asBoolean()).isFalse();
    assertThat(longApi.json().get("error").asText()).isEqualTo("URI too long");
    // Longer than Jetty parses (it refuses before there is a path) and paths that climb above the
    // root: the family is read from the request line's first bytes.
    for (String target : List.of(
        "/api/assistants/" + "a".repeat(100_000),
        "/api/assistants/../../etc",
        "/api/assistants/../../../etc/passwd")) {
      String answer = raw("GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
      assertThat(answer).as(target).matches("(?s)HTTP/1.1 4\\d\\d .*").contains("application/json");
      JsonNode body = Json.read(answer.substring(answer.indexOf("\r\n\r\n") + 4), JsonNode.class);
      assertThat(body.get("success").asBoolean(true)).as(answer).isFalse();
      assertThat(body.get("error").asText()).as(answer).isNotEqualTo("Internal server error");
    }
    String longOpenAi = raw("GET /v1/memory/" + "a".repeat(100_000)
        + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assertThat(Json.read(longOpenAi.substring(longOpenAi.indexOf("\r\n\r\n") + 4), JsonNode.class)
            .at("/error/type")
            .asText())
        .isEqualTo("invalid_request_error");
  }

  private static String raw(String request) throws Exception {
    try (Socket socket = new Socket("127.0.0.1", server.engram.port())) {
      socket.setSoTimeout(5_000);
      socket.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
      return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  /** An encoded NUL or control character in the path: refused, in the shape of its family. */
  @Test
  void controlCharactersInThePathAreRefusedInTheFamilyShape() {
    for (String path : List.of("/v1/memory/mem_%00x", "/v1/memory/mem_%01x", "/v1/x%7f")) {
      Http.Response refused = http.get(path).send();
      assertThat(refused.status()).as(path).isEqualTo(400);
      assertThat(refused.header("Content-Type")).startsWith("application/json");
      assertThat(refused.json().at("/error/type").asText()).isEqualTo("invalid_request_error");
      assertThat(refused.json().at("/error/message").asText()).contains("control characters");
    }
    for (String path : List.of("/api/assistants/%00", "/api/assistants/a%0ab")) {
      Http.Response refused = http.get(path).send();
      assertThat(refused.status()).as(path).isEqualTo(400);
      assertThat(refused.json().get("success").asBoolean()).isFalse();
      assertThat(refused.json().get("message").asText()).contains("control characters");
    }
    // In the query, a NUL reaches the route, which refuses it (the same rule as JSON bodies).
    Http.Response query = http.get("/v1/memory/events?type=%00").send();
    assertThat(query.status()).isEqualTo(400);
    assertThat(query.json().at("/error/message").asText()).contains("NUL");
  }
}
