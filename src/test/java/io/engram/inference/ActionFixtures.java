package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import io.engram.platform.crypto.SigningSecrets;
import io.engram.platform.json.Json;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/** Assistants with capabilities, and action bridges, for the tests of capabilities that act. */
final class ActionFixtures {
  private final TestServer server;
  private final String orgId;
  private final String admin;

  ActionFixtures(TestServer server, String orgId, String admin) {
    this.server = server;
    this.orgId = orgId;
    this.admin = admin;
  }

  /** A new shared assistant with these capabilities (a PATCH body); its id. */
  String assistant(String capabilities) {
    Http.Response created = server
        .http
        .post("/api/assistants")
        .bearer(admin)
        .json("{\"name\":\"Desk\",\"type\":\"org_shared\"}")
        .send();
    assertThat(created.status()).as(created.text()).isEqualTo(201);
    String id = created.json().at("/assistant/_id").asText();
    patch(id, capabilities);
    return id;
  }

  void patch(String assistant, String json) {
    Http.Response patched = server
        .http
        .patch("/api/assistants/" + assistant + "/capabilities")
        .bearer(admin)
        .json(json)
        .send();
    assertThat(patched.status()).as(patched.text()).isEqualTo(200);
  }

  Bridge bridge(String capability) throws IOException {
    return new Bridge(server, orgId, admin, capability);
  }

  static String ordersConfig(int perDay, boolean approval) {
    return "{\"capabilities\":[\"answer_questions\",\"create_orders\",\"search_org_knowledge\"],"
        + "\"capabilityConfigs\":{\"create_orders\":{\"allowedOrderTypes\":[\"purchase\","
        + "\"restock\"],\"maxOrdersPerDay\":" + perDay + ",\"requiresApproval\":" + approval
        + "}}}";
  }

  /**
   * An organization's own system for one capability: a local HTTP server registered as the
   * capability's action bridge. It checks each call's signature with the secret Engram showed
   * once, and answers with a new order id.
   */
  public static final class Bridge {
    record Received(JsonNode body, String idempotencyKey, boolean signatureValid) {}

    final HttpServer server;
    final String secret;
    private final List<Received> received = new CopyOnWriteArrayList<>();
    private final AtomicInteger ids = new AtomicInteger();

    Bridge(TestServer engram, String orgId, String admin, String capability) throws IOException {
      server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
      server.createContext("/", exchange -> {
        String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        String signature = exchange.getRequestHeaders().getFirst("X-Engram-Signature");
        long seconds = Long.parseLong(signature.substring(2, signature.indexOf(',')));
        received.add(new Received(
            Json.read(body, JsonNode.class),
            exchange.getRequestHeaders().getFirst("Idempotency-Key"),
            signature.equals(SigningSecrets.signature(secret(), seconds, body))));
        byte[] answer = ("{\"order_id\":\"ord_" + ids.incrementAndGet()
                + "\",\"status\":\"created\"}")
            .getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().add("Content-Type", "application/json");
        exchange.sendResponseHeaders(200, answer.length);
        exchange.getResponseBody().write(answer);
        exchange.close();
      });
      server.start();
      Http.Response registered = engram
          .http
          .post("/v1/organizations/" + orgId + "/action-bridges")
          .bearer(admin)
          .json("{\"capability\":\"" + capability + "\",\"url\":\"http://127.0.0.1:"
              + server.getAddress().getPort() + "/bridge\",\"timeout_ms\":5000}")
          .send();
      assertThat(registered.status()).as(registered.text()).isEqualTo(201);
      secret = registered.json().get("secret").asText();
    }

    private String secret() {
      return secret;
    }

    int count() {
      return received.size();
    }

    Received last() {
      return received.getLast();
    }
  }
}
