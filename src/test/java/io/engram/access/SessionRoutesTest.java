package io.engram.access;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.http.Responses;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.net.HttpCookie;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class SessionRoutesTest {
  static final String PASSWORD = "correct horse battery staple";
  static TestServer server;
  static Http http;
  static String org;

  @BeforeAll
  static void start() {
    server = TestServer.builder()
        .probe(routes -> routes.patch("/api/probe/settings", Requires.signedIn(), ctx -> {
          Responses.json(ctx, Map.of("success", true));
        }))
        .start();
    http = server.http;
    org = server.createOrganization("seed");
    server.createUser(org, "ada@example.com", "admin", PASSWORD);
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  /** A signed-in browser: its session cookie and CSRF token. */
  record Browser(String cookie, String csrf, Http.Response login) {
    Http.Call with(Http.Call call) {
      return call.header("Cookie", Authentication.SESSION_COOKIE + "=" + cookie);
    }
  }

  static Browser signIn(String email, String password) {
    Http.Response login = http.post("/api/auth/login")
        .json("{\"email\":\"" + email + "\",\"password\":\"" + password + "\"}")
        .send();
    assertThat(login.status()).as(login.text()).isEqualTo(200);
    String session = cookie(login, Authentication.SESSION_COOKIE).getValue();
    return new Browser(session, login.json().get("csrfToken").asText(), login);
  }

  static HttpCookie cookie(Http.Response response, String name) {
    return response.headerValues("Set-Cookie").stream()
        .flatMap(header -> HttpCookie.parse(header).stream())
        .filter(c -> c.getName().equals(name))
        .findFirst()
        .orElseThrow();
  }

  @Test
  void signingInSetsAnHttpOnlySameSiteCookieAndReturnsTheCsrfToken() {
    Browser browser = signIn("ADA@example.com", PASSWORD);
    String setCookie = browser.login.headerValues("Set-Cookie").stream()
        .filter(h -> h.startsWith(Authentication.SESSION_COOKIE + "="))
        .findFirst()
        .orElseThrow();
    assertThat(setCookie)
        .contains("HttpOnly")
        .contains("SameSite=Lax")
        .contains("Path=/")
        .doesNotContain("Secure");
    assertThat(browser.cookie).startsWith("engs_");
    JsonNode body = browser.login.json();
    assertThat(body.get("success").asBoolean()).isTrue();
    assertThat(body.at("/user/role").asText()).isEqualTo("admin");
    assertThat(body.at("/organization/id").asText()).isEqualTo(org);
    assertThat(cookie(browser.login, Authentication.CSRF_COOKIE).getValue())
        .isEqualTo(browser.csrf);

    Http.Response session = browser.with(http.get("/api/auth/session")).send();
    assertThat(session.status()).isEqualTo(200);
    assertThat(session.json().at("/user/email").asText()).isEqualTo("ada@example.com");
  }

  @Test
  void secureCookiesWhenConfigured() {
    try (TestServer secure =
        TestServer.builder().env("ENGRAM_COOKIE_SECURE", "true").start()) {
      String secureOrg = secure.createOrganization("spark");
      secure.createUser(secureOrg, "sec@example.com", "member", PASSWORD);
      Http.Response login = secure
          .http
          .post("/api/auth/login")
          .json("{\"email\":\"sec@example.com\",\"password\":\"" + PASSWORD + "\"}")
          .send();
      assertThat(login.headerValues("Set-Cookie"))
          .allSatisfy(h -> assertThat(h).contains("Secure"));
    }
  }

  @Test
  void stateChangingRequestsNeedTheCsrfTokenButBearerCallsDoNot() {
    Browser browser = signIn("ada@example.com", PASSWORD);
    Http.Response missing =
        browser.with(http.patch("/api/probe/settings").json("{}")).send();
    assertThat(missing.status()).isEqualTo(403);
    assertThat(missing.json().get("success").asBoolean()).isFalse();
    assertThat(missing.json().get("message").asText()).contains("X-CSRF-Token");
    Http.Response wrong = browser
        .with(http.patch("/api/probe/settings").json("{}"))
        .header(Authentication.CSRF_HEADER, "csrf_forged")
        .send();
    assertThat(wrong.status()).isEqualTo(403);
    Http.Response right = browser
        .with(http.patch("/api/probe/settings").json("{}"))
        .header(Authentication.CSRF_HEADER, browser.csrf)
        .send();
    assertThat(right.status()).isEqualTo(200);
    String key = server.apiKey(org, 1000, "inference");
    assertThat(http.patch("/api/probe/settings").bearer(key).json("{}").send().status())
        .isEqualTo(200);
  }

  @Test
  void signingOutEndsTheSession() {
    Browser browser = signIn("ada@example.com", PASSWORD);
    assertThat(browser.with(http.post("/api/auth/logout")).send().status())
        .as("CSRF required")
        .isEqualTo(403);
    Http.Response out = browser
        .with(http.post("/api/auth/logout"))
        .header(Authentication.CSRF_HEADER, browser.csrf)
        .send();
    assertThat(out.status()).isEqualTo(200);
    assertThat(cookie(out, Authentication.SESSION_COOKIE).getMaxAge()).isZero();
    Http.Response after = browser.with(http.get("/api/auth/session")).send();
    assertThat(after.status()).isEqualTo(401);
    assertThat(after.json().get("error").asText()).isEqualTo("Unauthorized");
  }

  @Test
  void aSessionExpires() {
    Browser browser = signIn("ada@example.com", PASSWORD);
    server.clock.advance(Duration.ofMinutes(721));
    assertThat(browser.with(http.get("/api/auth/session")).send().status()).isEqualTo(401);
  }

  @Test
  void wrongPasswordAndUnknownEmailAnswerTheSame() {
    Http.Response wrongPassword = http.post("/api/auth/login")
        .json("{\"email\":\"ada@example.com\",\"password\":\"not the password\"}")
        .send();
    Http.Response unknown = http.post("/api/auth/login")
        .json("{\"email\":\"nobody@example.com\",\"password\":\"not the password\"}")
        .send();
    assertThat(wrongPassword.status()).isEqualTo(401);
    assertThat(unknown.status()).isEqualTo(401);
    assertThat(wrongPassword.json()).isEqualTo(unknown.json());
    assertThat(wrongPassword.headerValues("Set-Cookie")).isEmpty();
  }

  @Test
  void repeatedFailedSignInsFromOneAddressAreRefusedUntilOneHasSlidOutOfTheLastMinute() {
    try (TestServer fresh = TestServer.start()) {
      String freshOrg = fresh.createOrganization("seed");
      fresh.createUser(freshOrg, "bob@example.com", "member", PASSWORD);
      String good = "{\"email\":\"bob@example.com\",\"password\":\"" + PASSWORD + "\"}";
      assertThat(fresh.http.post("/api/auth/login").json(good).send().status()).isEqualTo(200);
      for (int i = 0; i < AccessModule.FAILED_SIGN_INS_PER_MINUTE; i++) {
        assertThat(fresh
                .http
                .post("/api/auth/login")
                .json("{\"email\":\"bob@example.com\",\"password\":\"guess" + i + "\"}")
                .send()
                .status())
            .isEqualTo(401);
      }
      Http.Response refused = fresh.http.post("/api/auth/login").json(good).send();
      assertThat(refused.status()).isEqualTo(429);
      // Ten failures at the minute's start: the next minute, until a tenth of it has passed, still
      // counts them all (a sliding window).
      assertThat(refused.header("Retry-After")).isEqualTo("66");
      assertThat(refused.json().get("retryAfter").asInt()).isEqualTo(66);
      fresh.clock.advance(Duration.ofSeconds(65));
      assertThat(fresh.http.post("/api/auth/login").json(good).send().status()).isEqualTo(429);
      fresh.clock.advance(Duration.ofSeconds(1));
      assertThat(fresh.http.post("/api/auth/login").json(good).send().status()).isEqualTo(200);
    }
  }

  @Test
  void sessionCookiesManageTheOrganizationButAreNoInferenceCredential() {
    Browser browser = signIn("ada@example.com", PASSWORD);
    // The console's settings pages: an admin's session reads its organization.
    assertThat(browser.with(http.get("/v1/organizations/" + org)).send().status())
        .isEqualTo(200);
    // The gateway's routes never read the cookie.
    assertThat(browser.with(http.get("/v1/models")).send().status()).isEqualTo(401);
    assertThat(browser
            .with(http.post("/v1/embeddings"))
            .json("{\"input\":\"x\"}")
            .send()
            .status())
        .isEqualTo(401);
  }

  @Test
  void badSignInInputIs400InTheProductShape() {
    for (String body : List.of(
        "{\"email\":\"a@b.c\"}",
        "{\"password\":\"x\"}",
        "{\"email\":1,\"password\":\"x\"}",
        "[]")) {
      Http.Response response = http.post("/api/auth/login").json(body).send();
      assertThat(response.status()).as(body).isEqualTo(400);
      assertThat(response.json().get("success").asBoolean()).isFalse();
      assertThat(response.json().get("error").asText()).isEqualTo("Invalid request");
      assertThat(response.json().get("message").asText()).isNotBlank();
    }
  }
}
