package io.engram.finetuning;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.platform.json.Json;
import io.engram.platform.net.Egress;
import io.engram.platform.net.OutboundBlocked;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;

/**
 * An OpenAI-compatible fine-tuning API (the upstream's): files, jobs, their events, cancel, and
 * model deletion, with the upstream's key. Failures say whether trying again can help.
 */
final class UpstreamFineTuning {
  /** The upstream answered with an error, or could not be reached. */
  static final class UpstreamException extends IOException {
    final int status;

    UpstreamException(int status, String message) {
      super(message);
      this.status = status;
    }

    /** A refusal (4xx other than 408 and 429): trying the same again cannot succeed. */
    boolean refused() {
      return status >= 400 && status < 500 && status != 408 && status != 429;
    }
  }

  private final URI base;
  private final String apiKey;
  private final HttpClient client;
  private final Duration timeout;
  private final Egress egress;
  private final String orgId;

  /** @param egress the outbound firewall of the organization a call is made for ({@link #on}) */
  UpstreamFineTuning(URI baseUrl, String apiKey, Duration timeout, Egress egress) {
    String text = baseUrl.toString();
    this.base = URI.create(text.endsWith("/") ? text : text + "/");
    this.apiKey = apiKey == null || apiKey.isEmpty() ? null : apiKey;
    this.timeout = timeout;
    this.client = HttpClient.newBuilder().connectTimeout(timeout).build();
    this.egress = egress;
    this.orgId = null;
  }

  private UpstreamFineTuning(UpstreamFineTuning shared, String orgId) {
    this.base = shared.base;
    this.apiKey = shared.apiKey;
    this.timeout = shared.timeout;
    this.client = shared.client;
    this.egress = shared.egress;
    this.orgId = orgId;
  }

  /** The same upstream, called for an organization: its outbound firewall admits each call. */
  UpstreamFineTuning on(String orgId) {
    return new UpstreamFineTuning(this, orgId);
  }

  String uploadFile(String filename, Path content) throws IOException {
    String boundary = "engram-" + UUID.randomUUID();
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    String safeName = filename.replace("\"", "");
    body.writeBytes(("--" + boundary
            + "\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\n"
            + "fine-tune\r\n--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; "
            + "filename=\"" + safeName + "\"\r\nContent-Type: application/jsonl\r\n\r\n")
        .getBytes(StandardCharsets.UTF_8));
    body.writeBytes(Files.readAllBytes(content));
    body.writeBytes(("\r\n--" + boundary + "--\r\n").getBytes(StandardCharsets.UTF_8));
    return send(request("files")
            .header("Content-Type", "multipart/form-data; boundary=" + boundary)
            .POST(HttpRequest.BodyPublishers.ofByteArray(body.toByteArray())))
        .path("id")
        .asText();
  }

  JsonNode createJob(ObjectNode job) throws IOException {
    return send(request("fine_tuning/jobs")
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(Json.write(job))));
  }

  JsonNode job(String id) throws IOException {
    return send(request("fine_tuning/jobs/" + encode(id)).GET());
  }

  /** The job's newest events, newest first. */
  JsonNode events(String id) throws IOException {
    return send(request("fine_tuning/jobs/" + encode(id) + "/events?limit=100").GET());
  }

  JsonNode cancel(String id) throws IOException {
    return send(request("fine_tuning/jobs/" + encode(id) + "/cancel")
        .POST(HttpRequest.BodyPublishers.noBody()));
  }

  void deleteModel(String model) throws IOException {
    send(request("models/" + encode(model)).DELETE());
  }

  private static String encode(String segment) {
    return URLEncoder.encode(segment, StandardCharsets.UTF_8).replace("+", "%20");
  }

  private HttpRequest.Builder request(String path) {
    HttpRequest.Builder builder = HttpRequest.newBuilder(base.resolve(path)).timeout(timeout);
    if (apiKey != null) {
      builder.header("Authorization", "Bearer " + apiKey);
    }
    return builder;
  }

  private JsonNode send(HttpRequest.Builder request) throws IOException {
    HttpResponse<String> response;
    try {
      egress.admit(orgId, base);
    } catch (OutboundBlocked e) {
      throw new UpstreamException(403, e.getMessage());
    }
    try {
      response = client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new UpstreamException(0, "interrupted");
    } catch (IOException e) {
      throw new UpstreamException(0, "the upstream could not be reached: " + e);
    }
    JsonNode body;
    try {
      body = response.body().isBlank()
          ? Json.MAPPER.createObjectNode()
          : Json.MAPPER.readTree(response.body());
    } catch (IOException e) {
      throw new UpstreamException(
          response.statusCode(),
          "the upstream answered " + response.statusCode() + " with a body that is not JSON");
    }
    if (response.statusCode() / 100 != 2) {
      String message = body.path("error").path("message").asText("");
      throw new UpstreamException(
          response.statusCode(),
          "the upstream answered " + response.statusCode()
              + (message.isEmpty() ? "" : ": " + message));
    }
    return body;
  }
}
