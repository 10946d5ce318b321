package io.engram.actions;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.platform.crypto.SigningSecrets;
import io.engram.platform.json.Json;
import io.engram.platform.net.Egress;
import io.engram.platform.net.OutboundBlocked;
import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;

/**
 * Calls an action bridge: a POST of the execution (capability, assistant, tool call, arguments,
 * the config in force), signed {@code X-Engram-Signature: t=<seconds>,v1=<HMAC-SHA256>} with the
 * bridge's secret, with the tool call id as {@code Idempotency-Key} so a bridge that sees a call
 * twice can act once, and the bridge's timeout. A 2xx answer's JSON body is the result the model
 * is given (a body that is not JSON is given as {@code {"text": ...}}); anything else is a failure
 * whose reason names the status.
 */
final class BridgeCaller {
  private static final int MAX_ANSWER = 1024 * 1024;

  /** What the bridge answered: its result, or why it failed. */
  record Outcome(JsonNode result, String failure) {}

  private final ActionBridges bridges;
  private final Clock clock;
  private final HttpClient client = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(5))
      .followRedirects(HttpClient.Redirect.NEVER)
      .build();

  private final Egress egress;

  BridgeCaller(ActionBridges bridges, Clock clock, Egress egress) {
    this.egress = egress;
    this.bridges = bridges;
    this.clock = clock;
  }

  Outcome call(ActionBridge bridge, Execution execution, ObjectNode config) {
    try {
      egress.admit(bridge.orgId(), bridge.url());
    } catch (OutboundBlocked e) {
      return new Outcome(null, e.getMessage());
    }
    long now = clock.instant().getEpochSecond();
    ObjectNode body = Json.MAPPER
        .createObjectNode()
        .put("id", execution.id())
        .put("object", "capability.execution")
        .put("capability", execution.capabilityId())
        .put("organization_id", execution.orgId())
        .put("assistant_id", execution.assistantId())
        .put("tool_call_id", execution.toolCallId())
        .put("created", now);
    body.set("arguments", execution.arguments());
    body.set("config", config);
    String text = Json.write(body);
    HttpRequest request = HttpRequest.newBuilder(bridge.url())
        .timeout(Duration.ofMillis(bridge.timeoutMillis()))
        .header("Content-Type", "application/json")
        .header("User-Agent", "Engram-Actions/1")
        .header("Idempotency-Key", execution.toolCallId())
        .header("X-Engram-Execution", execution.id())
        .header("X-Engram-Signature", SigningSecrets.signature(bridges.secret(bridge), now, text))
        .POST(HttpRequest.BodyPublishers.ofString(text, StandardCharsets.UTF_8))
        .build();
    try {
      HttpResponse<InputStream> response =
          client.send(request, HttpResponse.BodyHandlers.ofInputStream());
      String answer;
      try (InputStream in = response.body()) {
        answer = new String(in.readNBytes(MAX_ANSWER), StandardCharsets.UTF_8);
      }
      if (response.statusCode() / 100 != 2) {
        return new Outcome(
            null,
            "the bridge answered " + response.statusCode()
                + (answer.isBlank() ? "" : ": " + abbreviated(answer)));
      }
      return new Outcome(result(answer), null);
    } catch (java.net.http.HttpTimeoutException e) {
      return new Outcome(
          null, "the bridge did not answer within " + bridge.timeoutMillis() + " ms");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Outcome(null, "interrupted while calling the bridge");
    } catch (IOException e) {
      return new Outcome(
          null, "the bridge could not be reached: " + e.getClass().getSimpleName());
    }
  }

  private static JsonNode result(String answer) {
    if (answer.isBlank()) {
      return Json.MAPPER.createObjectNode();
    }
    try {
      return Json.MAPPER.readTree(answer);
    } catch (IOException e) {
      return Json.MAPPER.createObjectNode().put("text", abbreviated(answer));
    }
  }

  private static String abbreviated(String text) {
    return text.length() <= 2000 ? text : text.substring(0, 2000) + "...";
  }
}
