package io.engram.network;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.DnsResponder;
import io.engram.support.Http;
import io.engram.support.RawHttp;
import io.engram.support.TestServer;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Custom domains: validated, proved by a TXT record that a DNS responder of the test serves on
 * 127.0.0.1, re-checked on schedule; a verified domain serves its organization only and answers
 * 404 before verification and after its record disappears.
 */
class CustomDomainTest {
  private static DnsResponder dns;
  private static TestServer server;

  @BeforeAll
  static void start() throws Exception {
    dns = new DnsResponder();
    server = TestServer.builder()
        .env("ENGRAM_DNS_RESOLVER", dns.address())
        .env("ENGRAM_SERVER_NAMES", "api.engram.test,localhost")
        .start();
  }

  @AfterAll
  static void stop() throws Exception {
    server.close();
    dns.close();
  }

  private record Org(String id, String key) {}

  private static Org org(String plan) {
    String id = server.createOrganization(plan);
    return new Org(id, server.apiKey(id, 1000, "admin", "inference"));
  }

  private static Http.Response post(Org org, String path, String json) {
    return server
        .http
        .post("/v1/organizations/" + org.id() + path)
        .bearer(org.key())
        .json(json)
        .send();
  }

  private static RawHttp.Response onDomain(String host, String key) throws Exception {
    return RawHttp.send(
        null,
        server.engram.port(),
        host,
        "GET",
        "/v1/models",
        null,
        "Authorization",
        "Bearer " + key);
  }

  @Test
  void aDomainIsVerifiedByItsTxtRecordAndThenServesItsOrganizationOnly() throws Exception {
    Org org = org("scale");
    Org other = org("scale");
    Http.Response created = post(org, "/domain", "{\"domain\":\"API.Acme-One.example.\"}");
    assertThat(created.status()).as(created.text()).isEqualTo(201);
    JsonNode domain = created.json();
    assertThat(domain.get("domain").asText()).isEqualTo("api.acme-one.example");
    assertThat(domain.get("status").asText()).isEqualTo("pending_verification");
    String name = domain.at("/verification/name").asText();
    String value = domain.at("/verification/value").asText();
    assertThat(name).isEqualTo("_engram-challenge.api.acme-one.example");
    assertThat(value).startsWith("engram-verification=");

    // Before verification the domain answers 404, whoever calls.
    assertThat(onDomain("api.acme-one.example", org.key()).status()).isEqualTo(404);
    String id = domain.get("id").asText();
    Http.Response notYet = post(org, "/domain/" + id + "/verify", "{}");
    assertThat(notYet.json().get("status").asText()).isEqualTo("pending_verification");
    assertThat(notYet.json().get("failure_reason").asText()).contains(name);

    dns.putTxt(name, "some-other-record", value);
    Http.Response verified = post(org, "/domain/" + id + "/verify", "{}");
    assertThat(verified.json().get("status").asText()).isEqualTo("verified");
    assertThat(verified.json().get("verified_at").isNumber()).isTrue();

    assertThat(onDomain("api.acme-one.example", org.key()).status()).isEqualTo(200);
    assertThat(onDomain("api.acme-one.example:443", org.key()).status()).isEqualTo(200);
    RawHttp.Response foreign = onDomain("api.acme-one.example", other.key());
    assertThat(foreign.status()).isEqualTo(401);
    assertThat(onDomain("api.acme-one.example", TestServer.ADMIN_KEY).status()).isEqualTo(401);
    // The other organization still works on the server's own name.
    assertThat(onDomain("localhost", other.key()).status()).isEqualTo(200);

    // A plan below Scale stops the domain; back on Scale, a verification serves it again.
    Http.Response downgraded = server.asOperator(
        server.http.patch("/v1/organizations/" + org.id()).json("{\"plan\":\"seed\"}"));
    assertThat(downgraded.json().at("/consequences/custom_domains_stopped").asInt())
        .isEqualTo(1);
    assertThat(onDomain("api.acme-one.example", org.key()).status()).isEqualTo(404);
    server.asOperator(
        server.http.patch("/v1/organizations/" + org.id()).json("{\"plan\":\"scale\"}"));
    assertThat(post(org, "/domain/" + id + "/verify", "{}").json().get("status").asText())
        .isEqualTo("verified");
    assertThat(onDomain("api.acme-one.example", org.key()).status()).isEqualTo(200);

    // The scheduled re-check: the record is gone, the domain fails and stops serving.
    dns.remove(name);
    server.clock.advance(Duration.ofHours(7));
    server.engram.network().checkDomains();
    server.engram.network().refresh();
    JsonNode failed = server
        .http
        .get("/v1/organizations/" + org.id() + "/domain/" + id)
        .bearer(org.key())
        .send()
        .json();
    assertThat(failed.get("status").asText()).isEqualTo("failed");
    assertThat(failed.get("failure_reason").asText()).contains("gone");
    assertThat(onDomain("api.acme-one.example", org.key()).status()).isEqualTo(404);

    // The audit trail shows each step.
    String audit = server
        .http
        .get("/v1/organizations/" + org.id() + "/audit")
        .bearer(org.key())
        .send()
        .text();
    assertThat(audit).contains("network.domain.create").contains("network.domain.state");
  }

  @Test
  void browsersOnACustomDomainAreAnsweredByTheOrganizationsCorsOrigins() throws Exception {
    Org org = org("scale");
    JsonNode domain =
        post(org, "/domain", "{\"domain\":\"app.cors-one.example\"}").json();
    dns.putTxt(
        domain.at("/verification/name").asText(),
        domain.at("/verification/value").asText());
    post(org, "/domain/" + domain.get("id").asText() + "/verify", "{}");
    Http.Response bad =
        post(org, "/env", "{\"variables\":{\"CORS_ORIGINS\":\"https://a.example/path\"}}");
    assertThat(bad.status()).isEqualTo(400);
    assertThat(bad.json().at("/error/param").asText()).isEqualTo("variables.CORS_ORIGINS");
    Http.Response set =
        post(org, "/env", "{\"variables\":{\"CORS_ORIGINS\":\"https://app.acme.example\"}}");
    assertThat(set.status()).as(set.text()).isEqualTo(200);

    RawHttp.Response allowed = preflight("app.cors-one.example", "https://app.acme.example");
    assertThat(allowed.status()).isLessThan(300);
    assertThat(allowed.headers().get("access-control-allow-origin"))
        .isEqualTo("https://app.acme.example");
    RawHttp.Response refused = preflight("app.cors-one.example", "https://evil.example");
    assertThat(refused.status()).isEqualTo(403);
    assertThat(refused.json().at("/error/code").asText()).isEqualTo("cors_origin_not_allowed");
    RawHttp.Response request = RawHttp.send(
        null,
        server.engram.port(),
        "app.cors-one.example",
        "GET",
        "/v1/models",
        null,
        "Authorization",
        "Bearer " + org.key(),
        "Origin",
        "https://evil.example");
    assertThat(request.status()).isEqualTo(200);
    assertThat(request.headers()).doesNotContainKey("access-control-allow-origin");
    // The server's own name keeps the server's CORS_ORIGINS (*).
    assertThat(preflight("localhost", "https://evil.example")
            .headers()
            .get("access-control-allow-origin"))
        .isIn("*", "https://evil.example");
  }

  private static RawHttp.Response preflight(String host, String origin) throws Exception {
    return RawHttp.send(
        null,
        server.engram.port(),
        host,
        "OPTIONS",
        "/v1/models",
        null,
        "Origin",
        origin,
        "Access-Control-Request-Method",
        "GET",
        "Access-Control-Request-Headers",
        "authorization");
  }

  @Test
  void domainsNeedTheScalePlanAValidNameAndAreUniqueAcrossOrganizations() {
    Org seed = org("seed");
    Http.Response refused = post(seed, "/domain", "{\"domain\":\"seed.example\"}");
    assertThat(refused.status()).isEqualTo(403);
    assertThat(refused.json().at("/error/code").asText()).isEqualTo("plan_requires_scale");

    Org org = org("scale");
    String[][] bad = {
      {"{\"domain\":\"10.1.2.3\"}", "domain"},
      {"{\"domain\":\"[::1]\"}", "domain"},
      {"{\"domain\":\"*.acme.example\"}", "domain"},
      {"{\"domain\":\"intranet\"}", "domain"},
      {"{\"domain\":\"bad_name.example\"}", "domain"},
      {"{\"domain\":\"-lead.example\"}", "domain"},
      {"{\"domain\":\"a." + "x".repeat(64) + ".example\"}", "domain"},
      {"{\"domain\":\"app.api.engram.test\"}", "domain"},
      {"{\"domain\":\"localhost\"}", "domain"},
      {"{\"domain\":\"example.123\"}", "domain"},
      {"{}", "domain"},
      {"{\"domain\":\"a.example\",\"extra\":1}", "extra"},
    };
    for (String[] c : bad) {
      Http.Response response = post(org, "/domain", c[0]);
      assertThat(response.status()).as(c[0]).isEqualTo(400);
      assertThat(response.json().at("/error/param").asText()).as(c[0]).isEqualTo(c[1]);
    }
    Http.Response idn = post(org, "/domain", "{\"domain\":\"bücher.example\"}");
    assertThat(idn.json().get("domain").asText()).isEqualTo("xn--bcher-kva.example");
    Http.Response taken = post(org("scale"), "/domain", "{\"domain\":\"XN--BCHER-KVA.example\"}");
    assertThat(taken.status()).isEqualTo(409);
  }

  @Test
  void anotherOrganizationsDomainDoesNotExistForYou() {
    Org org = org("scale");
    Org other = org("scale");
    String id =
        post(org, "/domain", "{\"domain\":\"mine.example\"}").json().get("id").asText();
    String[][] calls = {
      {"GET", other.id(), "/domain/" + id},
      {"POST", other.id(), "/domain/" + id + "/verify"},
      {"DELETE", other.id(), "/domain/" + id},
      {"GET", org.id(), "/domain/" + id},
      {"DELETE", org.id(), "/domain/" + id},
    };
    for (String[] call : calls) {
      Http.Call request =
          server.http.method(call[0], "/v1/organizations/" + call[1] + call[2]).bearer(other.key());
      if (call[0].equals("POST")) {
        request.json("{}");
      }
      assertThat(request.send().status()).as(String.join(" ", call)).isEqualTo(404);
    }
    assertThat(server
            .http
            .delete("/v1/organizations/" + org.id() + "/domain/" + id)
            .bearer(org.key())
            .send()
            .status())
        .isEqualTo(204);
  }
}
