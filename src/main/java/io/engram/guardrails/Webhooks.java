package io.engram.guardrails;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.guardrails.detect.Detector;
import io.engram.guardrails.detect.Finding;
import io.engram.guardrails.detect.Findings;
import io.engram.platform.json.Json;
import io.engram.platform.net.Egress;
import io.engram.platform.net.OutboundBlocked;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The organization's own checks, called over HTTP (a {@code webhook} guardrail): Engram POSTs
 * {@code {"guardrail_id", "organization_id", "text"}} through the organization's outbound firewall
 * and reads {@code {"findings": [{"kind", "start"?, "end"?}]}} (no findings: the text passes; a
 * finding without offsets covers the whole text). A webhook that does not answer 2xx with such a
 * body within {@code timeout_ms}, or that the firewall refuses, is counted in {@code
 * engram_guardrail_webhook_errors_total{guardrail,reason}} and its {@code on_error} applies: the
 * text passes, or it is blocked (a finding of kind {@link #UNAVAILABLE}, which blocks whatever the
 * guardrail's action).
 */
public final class Webhooks {
  /** The kind of a finding that stands for a webhook that could not answer (on_error: block). */
  public static final String UNAVAILABLE = "webhook_unavailable";

  private static final java.util.regex.Pattern KIND =
      java.util.regex.Pattern.compile("[a-z][a-z0-9_]{0,39}");

  private final HttpClient client = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(5))
      .followRedirects(HttpClient.Redirect.NEVER)
      .build();
  private final Egress egress;
  private final MeterRegistry registry;

  Webhooks(Egress egress, MeterRegistry registry) {
    this.egress = egress;
    this.registry = registry;
  }

  /** Whether the organization's outbound rules let it reach {@code url} (a 400 otherwise). */
  void admit(String orgId, URI url) {
    egress.admit(orgId, url);
  }

  /** The detector of one guardrail's webhook. */
  Detector detector(String guardrailId, String orgId, Check.Webhook check) {
    return new Detector() {
      @Override
      public List<Finding> find(String text) {
        return call(guardrailId, orgId, check, text);
      }

      @Override
      public int reach() {
        return WHOLE_TEXT;
      }
    };
  }

  private List<Finding> call(String guardrailId, String orgId, Check.Webhook check, String text) {
    if (text.isEmpty()) {
      return List.of();
    }
    String reason;
    try {
      egress.admit(orgId, check.url());
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("guardrail_id", guardrailId);
      body.put("organization_id", orgId);
      body.put("text", text);
      HttpRequest request = HttpRequest.newBuilder(check.url())
          .timeout(Duration.ofMillis(check.timeoutMs()))
          .header("Content-Type", "application/json")
          .header("User-Agent", "Engram-Guardrails/1")
          .POST(HttpRequest.BodyPublishers.ofString(Json.write(body), StandardCharsets.UTF_8))
          .build();
      HttpResponse<String> response =
          client.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
      if (response.statusCode() / 100 == 2) {
        List<Finding> found = findings(Json.read(response.body(), JsonNode.class), text.length());
        if (found != null) {
          return found;
        }
        reason = "bad_answer";
      } else {
        reason = "status_" + response.statusCode();
      }
    } catch (OutboundBlocked e) {
      reason = "outbound_blocked";
    } catch (HttpTimeoutException e) {
      reason = "timeout";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      reason = "interrupted";
    } catch (Exception e) {
      reason = "unreachable";
    }
    Counter.builder("engram_guardrail_webhook_errors_total")
        .description("Webhook guardrails that could not answer, by guardrail and reason")
        .tag("guardrail", guardrailId)
        .tag("reason", reason)
        .register(registry)
        .increment();
    return check.blockOnError() ? List.of(new Finding(UNAVAILABLE, 0, text.length())) : List.of();
  }

  /** The answer's findings within the text, or null when the answer is not the protocol's. */
  private static List<Finding> findings(JsonNode answer, int length) {
    JsonNode findings = answer == null ? null : answer.get("findings");
    if (findings == null || !findings.isArray()) {
      return null;
    }
    List<Finding> found = new ArrayList<>();
    for (JsonNode finding : findings) {
      // A kind goes into headers and the log: the webhook's own words, if they are a name.
      String kind = finding.path("kind").asText("webhook").toLowerCase(java.util.Locale.ROOT);
      kind = KIND.matcher(kind).matches() ? kind : "webhook";
      int start = finding.path("start").asInt(0);
      int end = finding.path("end").asInt(length);
      if (start < 0 || end > length || end <= start) {
        return null;
      }
      found.add(new Finding(kind.equals(UNAVAILABLE) ? "webhook" : kind, start, end));
    }
    return Findings.disjoint(found);
  }
}
