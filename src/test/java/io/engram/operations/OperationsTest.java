package io.engram.operations;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.http.Routes;
import io.engram.support.Http;
import io.engram.support.ServerTest;
import io.engram.support.TestServer;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class OperationsTest extends ServerTest {

  @Test
  void livenessAndReadinessNeedNoCredential() {
    assertThat(http.get("/v1/health").send().json().get("status").asText()).isEqualTo("ok");
    assertThat(http.get("/health").send().status()).isEqualTo(200);
    Http.Response ready = http.get("/v1/health/ready").send();
    assertThat(ready.status()).isEqualTo(200);
    assertThat(ready.json().at("/checks/database/status").asText()).isEqualTo("ok");
  }

  @Test
  void metricsNeedTheOperatorAndCountRequestsByRouteAndRejections() {
    assertThat(http.get("/metrics").send().status()).isEqualTo(401);
    String org = server.createOrganization("seed");
    String key = server.apiKey(org, 1, "admin");
    http.get("/v1/organizations/" + org).bearer(key).send();
    assertThat(http.get("/v1/organizations/" + org).bearer(key).send().status()).isEqualTo(429);
    Http.Response metrics = server.asOperator(http.get("/metrics"));
    assertThat(metrics.status()).isEqualTo(200);
    assertThat(metrics.header("Content-Type")).startsWith("text/plain");
    assertThat(metrics.text())
        .contains(
            "http_server_requests_seconds_count{method=\"GET\",route=\"/v1/organizations/{org_id}\",status=\"200\"}")
        .contains(
            "http_server_requests_seconds_bucket{method=\"GET\",route=\"/v1/organizations/{org_id}\",status=\"429\"")
        .contains("engram_ratelimit_rejections_total{limit=\"credential\"} 1.0")
        .contains("jvm_memory_used_bytes");
  }

  @Test
  void unmatchedRoutesShareOneMetricLabel() {
    http.get("/v1/nothing/" + System.nanoTime()).send();
    assertThat(server.asOperator(http.get("/metrics")).text())
        .contains("route=\"unmatched\",status=\"404\"");
  }

  @Test
  void withApiKeyRequiredFalseMetricsOpenButOrganizationDataStaysClosed() {
    try (TestServer relaxed =
        TestServer.builder().env("API_KEY_REQUIRED", "false").start()) {
      assertThat(relaxed.http.get("/metrics").send().status()).isEqualTo(200);
      String org = relaxed.createOrganization("seed");
      assertThat(relaxed.http.get("/v1/organizations/" + org).send().status()).isEqualTo(401);
      assertThat(relaxed
              .http
              .post("/v1/organizations")
              .json("{\"name\":\"x\"}")
              .send()
              .status())
          .isEqualTo(401);
      assertThat(relaxed.http.get("/v1/organizations/" + org + "/tokens").send().status())
          .isEqualTo(401);
      assertThat(relaxed.http.get("/api/auth/session").send().status()).isEqualTo(401);
      String otherKey = relaxed.apiKey(relaxed.createOrganization("seed"), 100, "admin");
      assertThat(relaxed
              .http
              .get("/v1/organizations/" + org)
              .bearer(otherKey)
              .send()
              .status())
          .isEqualTo(404);
    }
  }

  @Test
  void theOpenApiDocumentListsExactlyTheRegisteredRoutes() {
    JsonNode document = http.get("/openapi.json").send().json();
    assertThat(document.get("openapi").asText()).startsWith("3.1");
    Set<Routes.Route> documented = new HashSet<>();
    for (Iterator<Map.Entry<String, JsonNode>> paths =
            document.get("paths").properties().iterator();
        paths.hasNext(); ) {
      Map.Entry<String, JsonNode> path = paths.next();
      path.getValue()
          .fieldNames()
          .forEachRemaining(method ->
              documented.add(new Routes.Route(method.toUpperCase(Locale.ROOT), path.getKey())));
    }
    assertThat(documented)
        .containsExactlyInAnyOrderElementsOf(new HashSet<>(server.engram.routes()));
  }
}
