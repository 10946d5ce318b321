package io.engram.operations;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.Http;
import io.engram.support.TestServer;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What the shared body reader refuses for every JSON route: a body that is more than one JSON
 * value, text that is not valid Unicode, and a body in a content coding the server does not read.
 * Each refusal is a 4xx that stores nothing.
 */
class RequestBodyRulesTest {
  static TestServer server;
  static String org;
  static String token;

  @BeforeAll
  static void start() {
    server = TestServer.start();
    org = server.createOrganization("seed");
    token = server.token(org, null, "memory:read", "memory:write");
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private static int memories() {
    Http.Response list = server
        .http
        .post("/v1/memory/search")
        .bearer(token)
        .json("{\"query\":\"trailing garbage surrogate gzip\",\"limit\":50}")
        .send();
    assertThat(list.status()).isEqualTo(200);
    return list.json().get("memories").size();
  }

  @Test
  void aBodyMustBeExactlyOneJsonValue() {
    int before = memories();
    for (String body : List.of(
        "{\"text\":\"trailing garbage a\"}{\"text\":\"b\"}",
        "{\"text\":\"trailing garbage a\"} 7")) {
      Http.Response refused =
          server.http.post("/v1/memory").bearer(token).json(body).send();
      assertThat(refused.status()).as(body).isEqualTo(400);
      assertThat(refused.json().at("/error/message").asText()).contains("exactly one JSON value");
    }
    Http.Response unbalanced = server
        .http
        .post("/v1/memory")
        .bearer(token)
        .json("{\"text\":\"trailing garbage a\"}]")
        .send();
    assertThat(unbalanced.status()).isEqualTo(400);
    assertThat(unbalanced.json().at("/error/message").asText()).startsWith("Malformed JSON");
    assertThat(server
            .http
            .post("/v1/memory")
            .bearer(token)
            .json("{\"text\":\"trailing garbage ok\"}  \n ")
            .send()
            .status())
        .as("white space after the value is fine")
        .isEqualTo(201);
    assertThat(memories()).isEqualTo(before + 1);
  }

  @Test
  void halfASurrogatePairIsRefusedNotStoredAsAQuestionMark() {
    int before = memories();
    for (String text :
        List.of("surrogate \\ud800 alone", "surrogate \\udc00 first", "surrogate \\ud83d")) {
      Http.Response refused = server
          .http
          .post("/v1/memory")
          .bearer(token)
          .json("{\"text\":\"" + text + "\"}")
          .send();
      assertThat(refused.status()).as(text).isEqualTo(400);
      assertThat(refused.json().at("/error/param").asText()).isEqualTo("text");
    }
    Http.Response named = server.asOperator(
        server.http.post("/v1/organizations").json("{\"name\":\"Acme \\udfff\"}"));
    assertThat(named.status()).isEqualTo(400);
    Http.Response pair = server
        .http
        .post("/v1/memory")
        .bearer(token)
        .json("{\"text\":\"surrogate pair \\ud83d\\ude00 is an emoji\"}")
        .send();
    assertThat(pair.status()).as("a whole pair is a character").isEqualTo(201);
    assertThat(pair.json().get("text").asText()).contains("\uD83D\uDE00");
    assertThat(memories()).isEqualTo(before + 1);
  }

  @Test
  void anExplicitNullIsRefusedOnEngramsOwnRoutes() {
    int before = memories();
    for (String field : List.of("subject", "memoryKind", "confidence", "metadata", "occurredAt")) {
      Http.Response refused = server
          .http
          .post("/v1/memory")
          .bearer(token)
          .json("{\"text\":\"explicit null for " + field + "\",\"" + field + "\":null}")
          .send();
      assertThat(refused.status()).as(field).isEqualTo(400);
      assertThat(refused.json().at("/error/param").asText()).isEqualTo(field);
      assertThat(refused.json().at("/error/message").asText()).contains("must not be null");
    }
    Http.Response organization = server.asOperator(
        server.http.post("/v1/organizations").json("{\"name\":\"Nulls\",\"plan\":null}"));
    assertThat(organization.status()).isEqualTo(400);
    assertThat(memories()).isEqualTo(before);
  }

  @Test
  void aCompressedBodyIsRefusedWith415() {
    int before = memories();
    Http.Response refused = server
        .http
        .post("/v1/memory")
        .bearer(token)
        .header("Content-Encoding", "gzip")
        .json("{\"text\":\"gzip labelled but plain\"}")
        .send();
    assertThat(refused.status()).isEqualTo(415);
    assertThat(refused.json().at("/error/code").asText()).isEqualTo("unsupported_media_type");
    assertThat(memories()).isEqualTo(before);
    assertThat(server
            .http
            .post("/v1/memory")
            .bearer(token)
            .header("Content-Encoding", "identity")
            .json("{\"text\":\"gzip identity is plain\"}")
            .send()
            .status())
        .isEqualTo(201);
  }
}
