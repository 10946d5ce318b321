package io.engram.operations;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.platform.json.Json;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Random bodies (right field names, random types and values) against every write route: the
 * answer is always a 2xx or a 4xx in the family's shape, never a 500. The seed is printed so a
 * failure can be replayed.
 */
class MalformedInputFuzzTest {
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  private static final List<String> FIELDS = List.of(
      "name",
      "plan",
      "email",
      "role",
      "password",
      "scopes",
      "agents",
      "expires_at",
      "permissions",
      "rate_limit",
      "organizationId",
      "extra");

  @Test
  void randomBodiesNeverCauseA500() {
    long seed = Long.getLong("fuzz.seed", System.nanoTime());
    Random random = new Random(seed);
    try (TestServer server = TestServer.start()) {
      String org = server.createOrganization("seed");
      List<String> routes = List.of(
          "/v1/organizations",
          "/v1/organizations/" + org + "/users",
          "/v1/organizations/" + org + "/tokens",
          "/v1/organizations/" + org + "/api-keys",
          "/v1/account/keys",
          "/api/auth/login");
      for (int i = 0; i < 600; i++) {
        String route = routes.get(random.nextInt(routes.size()));
        String body = random.nextInt(10) == 0 ? garble(random) : Json.write(randomObject(random));
        Http.Response response = server.asOperator(server.http.post(route).json(body));
        assertThat(response.status())
            .as("seed %d, %s %s -> %s", seed, route, body, response.text())
            .isLessThan(500);
        JsonNode json = response.json();
        if (response.status() >= 400) {
          assertThat(route.startsWith("/api") ? json.has("success") : json.has("error"))
              .as(body)
              .isTrue();
        }
      }
    }
  }

  private static ObjectNode randomObject(Random random) {
    ObjectNode object = NODES.objectNode();
    for (String field : FIELDS) {
      if (random.nextInt(3) == 0) {
        object.set(field, randomValue(random, 0));
      }
    }
    return object;
  }

  private static JsonNode randomValue(Random random, int depth) {
    return switch (random.nextInt(depth > 2 ? 7 : 9)) {
      case 0 -> NODES.nullNode();
      case 1 -> NODES.booleanNode(random.nextBoolean());
      case 2 -> NODES.numberNode(random.nextLong());
      case 3 -> NODES.numberNode(random.nextDouble() * 1e12);
      case 4 -> NODES.numberNode(random.nextInt(200) - 50);
      case 5 -> NODES.textNode(randomText(random));
      case 6 ->
        NODES.textNode(List.of(
                "memory:read",
                "admin",
                "seed",
                "owner",
                "a@b.co",
                "sales",
                "2031-01-01T00:00:00Z",
                "")
            .get(random.nextInt(8)));
      case 7 -> {
        ArrayNode array = NODES.arrayNode();
        for (int i = random.nextInt(4); i > 0; i--) {
          array.add(randomValue(random, depth + 1));
        }
        yield array;
      }
      default -> {
        ObjectNode object = NODES.objectNode();
        object.set("k", randomValue(random, depth + 1));
        yield object;
      }
    };
  }

  private static String randomText(Random random) {
    StringBuilder text = new StringBuilder();
    for (int i = random.nextInt(random.nextInt(10) == 0 ? 400 : 20); i > 0; i--) {
      text.appendCodePoint(
          random.nextInt(10) == 0 ? random.nextInt(0x10000) : 32 + random.nextInt(95));
    }
    return text.toString().replace('\uD800', 'x');
  }

  private static String garble(Random random) {
    String json = Json.write(randomObject(random));
    int cut = json.isEmpty() ? 0 : random.nextInt(json.length());
    return json.substring(0, cut)
        + List.of("", "}", "{{", "\\u", "\"", ",,").get(random.nextInt(6));
  }
}
