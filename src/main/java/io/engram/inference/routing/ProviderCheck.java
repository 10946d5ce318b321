package io.engram.inference.routing;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.inference.engine.EngineException;
import io.engram.inference.remote.ProviderEngine;
import io.engram.platform.http.ApiException;
import io.engram.platform.json.Json;
import io.engram.platform.net.Egress;
import io.engram.platform.net.OutboundBlocked;
import java.time.Duration;
import java.util.List;

/**
 * {@code POST .../providers/{id}/check}: asks the provider for its models with the stored address,
 * key and headers (through the organization's outbound firewall, as a request would go), and says
 * what it answered: the model names, or the failure a request would meet.
 */
final class ProviderCheck {
  static final Duration TIMEOUT = Duration.ofSeconds(10);

  private final Egress egress;

  ProviderCheck(Egress egress) {
    this.egress = egress;
  }

  ObjectNode check(Provider provider) {
    if (provider.orgId() != null) {
      try {
        egress.admit(provider.orgId(), provider.baseUrl());
      } catch (OutboundBlocked e) {
        throw ApiException.forbidden("outbound_blocked", e.getMessage());
      }
    }
    ObjectNode answer = Json.MAPPER.createObjectNode().put("provider_id", provider.id());
    long started = System.nanoTime();
    try (ProviderEngine engine = Router.engine(provider, null, TIMEOUT, null)) {
      List<String> models = engine.listModels();
      answer.put("ok", true);
      answer
          .putArray("models")
          .addAll(models.stream().map(Json.MAPPER.getNodeFactory()::textNode).toList());
    } catch (EngineException e) {
      answer.put("ok", false);
      answer.putObject("error").put("code", e.failure().code()).put("message", e.getMessage());
    }
    answer.put("latency_ms", (System.nanoTime() - started) / 1_000_000);
    return answer;
  }
}
