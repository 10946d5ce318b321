package io.engram.platform.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.Http;
import io.engram.support.RawHttp;
import io.engram.support.TestServer;
import org.junit.jupiter.api.Test;

/**
 * CORS_ORIGINS set to one origin: a page of that origin (or of the server itself) may call the
 * API; another origin's preflight and any request of its that could change something are 403
 * cors_origin_not_allowed before they run (nothing is stored), and its reads get their normal
 * answer without Access-Control-Allow-* headers.
 */
class CorsTest {
  private static final String ALLOWED = "https://app.example";
  private static final String OTHER = "https://evil.example";

  @Test
  void anotherOriginMayNotChangeAnythingAndGetsNoCorsHeaders() throws Exception {
    try (TestServer server = TestServer.builder().env("CORS_ORIGINS", ALLOWED).start()) {
      String org = server.createOrganization("seed");
      String token = server.token(org, null, "memory:write", "memory:read");

      RawHttp.Response refusedPreflight = preflight(server, OTHER);
      assertThat(refusedPreflight.status()).isEqualTo(403);
      assertThat(refusedPreflight.json().at("/error/code").asText())
          .isEqualTo("cors_origin_not_allowed");
      assertThat(refusedPreflight.headers()).doesNotContainKey("access-control-allow-origin");

      Http.Response refusedWrite = server
          .http
          .post("/v1/memory")
          .bearer(token)
          .header("Origin", OTHER)
          .json("{\"text\":\"Written by another origin\"}")
          .send();
      assertThat(refusedWrite.status()).as(refusedWrite.text()).isEqualTo(403);
      assertThat(refusedWrite.json().at("/error/code").asText())
          .isEqualTo("cors_origin_not_allowed");
      assertThat(refusedWrite.header("Access-Control-Allow-Origin")).isNull();

      Http.Response read =
          server.http.get("/v1/memory").bearer(token).header("Origin", OTHER).send();
      assertThat(read.status()).as(read.text()).isEqualTo(200);
      assertThat(read.json().get("data")).isEmpty(); // the refused write stored nothing
      assertThat(read.header("Access-Control-Allow-Origin")).isNull();

      RawHttp.Response preflight = preflight(server, ALLOWED);
      assertThat(preflight.status()).isEqualTo(204);
      assertThat(preflight.headers().get("access-control-allow-origin")).isEqualTo(ALLOWED);
      assertThat(preflight.headers().get("access-control-allow-headers"))
          .isEqualTo("authorization, content-type");

      Http.Response allowed = server
          .http
          .post("/v1/memory")
          .bearer(token)
          .header("Origin", ALLOWED)
          .json("{\"text\":\"Written by the app\"}")
          .send();
      assertThat(allowed.status()).as(allowed.text()).isEqualTo(201);
      assertThat(allowed.header("Access-Control-Allow-Origin")).isEqualTo(ALLOWED);
      assertThat(allowed.header("Access-Control-Allow-Credentials")).isEqualTo("true");
      assertThat(allowed.header("Access-Control-Expose-Headers")).contains("X-Request-Id");

      // The server's own pages (the console) name the server as their origin.
      String own = "http://127.0.0.1:" + server.engram.port();
      Http.Response sameOrigin = server
          .http
          .post("/v1/memory")
          .bearer(token)
          .header("Origin", own)
          .json("{\"text\":\"Written by the console\"}")
          .send();
      assertThat(sameOrigin.status()).as(sameOrigin.text()).isEqualTo(201);
    }
  }

  private static RawHttp.Response preflight(TestServer server, String origin) throws Exception {
    return RawHttp.send(
        null,
        server.engram.port(),
        "127.0.0.1",
        "OPTIONS",
        "/v1/memory",
        null,
        "Origin",
        origin,
        "Access-Control-Request-Method",
        "POST",
        "Access-Control-Request-Headers",
        "authorization, content-type");
  }
}
