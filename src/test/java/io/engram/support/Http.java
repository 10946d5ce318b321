package io.engram.support;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** A small HTTP client for tests: real requests to a server on localhost. */
public final class Http {
  private static final HttpClient CLIENT = HttpClient.newBuilder()
      // HTTP/1.1, as the OpenAI and Anthropic clients speak it (the JDK's default would
      // upgrade to h2c now that the plain port speaks HTTP/2: CleartextHttp2Test covers that).
      .version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5))
      .build();

  /** A response with its body parsed as JSON when it is JSON. */
  public record Response(int status, java.net.http.HttpHeaders headers, String text) {
    public JsonNode json() {
      return Json.read(text, JsonNode.class);
    }

    public String header(String name) {
      return headers.firstValue(name).orElse(null);
    }

    public List<String> headerValues(String name) {
      return headers.allValues(name);
    }
  }

  /** A request being built: method, path, headers and body. */
  public static final class Call {
    private final String baseUrl;
    private final String method;
    private final String path;
    private final List<String> headers = new ArrayList<>();
    private byte[] body;

    Call(String baseUrl, String method, String path) {
      this.baseUrl = baseUrl;
      this.method = method;
      this.path = path;
    }

    public Call bearer(String token) {
      return header("Authorization", "Bearer " + token);
    }

    public Call header(String name, String value) {
      headers.add(name);
      headers.add(value);
      return this;
    }

    public Call json(String json) {
      return body("application/json", json);
    }

    public Call body(String contentType, String text) {
      return bytes(contentType, text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    public Call bytes(String contentType, byte[] bytes) {
      this.body = bytes;
      return contentType == null ? this : header("Content-Type", contentType);
    }

    private String header(String name) {
      for (int i = 0; i < headers.size(); i += 2) {
        if (headers.get(i).equalsIgnoreCase(name)) {
          return headers.get(i + 1);
        }
      }
      return null;
    }

    /** Every exchange keeps the OpenAPI document's word, or the test that made it fails here. */
    private void holdToContract(Response response) {
      String requestType = header("Content-Type");
      String requestBody =
          body == null ? null : new String(body, java.nio.charset.StandardCharsets.UTF_8);
      List<String> violations = ApiContract.violations(new ApiContract.Exchange(
          method,
          path,
          requestType,
          requestBody,
          response.status(),
          response.header("Content-Type"),
          response.text()));
      if (!violations.isEmpty()) {
        ContractReport.failed(violations);
      }
    }

    public Response send() {
      HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(baseUrl + path))
          .timeout(Duration.ofSeconds(30))
          .method(
              method,
              body == null
                  ? HttpRequest.BodyPublishers.noBody()
                  : HttpRequest.BodyPublishers.ofByteArray(body));
      for (int i = 0; i < headers.size(); i += 2) {
        request.header(headers.get(i), headers.get(i + 1));
      }
      try {
        HttpResponse<String> response =
            CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
        Response answer = new Response(response.statusCode(), response.headers(), response.body());
        holdToContract(answer);
        return answer;
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
  }

  private final String baseUrl;

  public Http(String baseUrl) {
    this.baseUrl = baseUrl;
  }

  public Call get(String path) {
    return new Call(baseUrl, "GET", path);
  }

  public Call post(String path) {
    return new Call(baseUrl, "POST", path);
  }

  public Call patch(String path) {
    return new Call(baseUrl, "PATCH", path);
  }

  public Call delete(String path) {
    return new Call(baseUrl, "DELETE", path);
  }

  public Call method(String method, String path) {
    return new Call(baseUrl, method, path);
  }
}
