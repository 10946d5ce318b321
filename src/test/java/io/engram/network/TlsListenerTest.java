package io.engram.network;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.net.AddressBook;
import io.engram.support.DnsResponder;
import io.engram.support.Http;
import io.engram.support.MultipartForm;
import io.engram.support.TestPki;
import io.engram.support.TestServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The TLS listener: TLS 1.3 and HTTP/2 by ALPN, the organization's certificate chosen by SNI once
 * uploaded (no restart), the server's own certificate for other names, TLS 1.2 refused by default;
 * and the checks of an upload, each a 400 naming the part at fault.
 */
class TlsListenerTest {
  private static final String DOMAIN = "secure.acme-tls.example";
  private static DnsResponder dns;
  private static TestServer server;
  private static String orgId;
  private static String key;
  private static TestPki.Issued ca;

  @BeforeAll
  static void start() throws Exception {
    dns = new DnsResponder();
    server = TestServer.builder()
        .env("ENGRAM_DNS_RESOLVER", dns.address())
        .env("API_TLS_PORT", "0")
        .start();
    // Certificates are judged by the server's clock; TLS clients judge them by the real one.
    server.clock.set(Instant.now());
    orgId = server.createOrganization("scale");
    key = server.apiKey(orgId, 1000, "admin", "inference");
    JsonNode domain = post("/domain", "{\"domain\":\"" + DOMAIN + "\"}").json();
    dns.putTxt(
        domain.at("/verification/name").asText(),
        domain.at("/verification/value").asText());
    assertThat(post("/domain/" + domain.get("id").asText() + "/verify", "{}")
            .json()
            .get("status")
            .asText())
        .isEqualTo("verified");
    ca = TestPki.authority("Acme Test CA");
    // Clients of this test reach the custom domain at 127.0.0.1 (the JVM resolves through Engram's
    // address book, as the server does).
    AddressBook.shared().pin(DOMAIN, new InetAddress[] {InetAddress.getLoopbackAddress()});
  }

  @AfterAll
  static void stop() throws Exception {
    server.close();
    dns.close();
  }

  private static Http.Response post(String path, String json) {
    return server
        .http
        .post("/v1/organizations/" + orgId + path)
        .bearer(key)
        .json(json)
        .send();
  }

  private static Http.Response upload(String certificate, String privateKey, String bundle) {
    MultipartForm form = new MultipartForm();
    if (certificate != null) {
      form.field("certificate", certificate);
    }
    if (privateKey != null) {
      form.field("private_key", privateKey);
    }
    if (bundle != null) {
      form.field("ca_bundle", bundle);
    }
    return server
        .http
        .post("/v1/organizations/" + orgId + "/ssl")
        .bearer(key)
        .bytes(form.contentType(), form.bytes())
        .send();
  }

  /** The certificate the listener serves for an SNI name, read with a client that trusts all. */
  private static X509Certificate served(String sni, String... protocols) throws Exception {
    return served(server.engram.tlsPort(), sni, protocols);
  }

  /** The certificate a TLS listener on {@code port} serves for an SNI name (TLS 1.3 asserted). */
  static X509Certificate served(int port, String sni, String... protocols) throws Exception {
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, new TrustManager[] {new TrustAll()}, null);
    try (SSLSocket socket =
        (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", port)) {
      SSLParameters parameters = socket.getSSLParameters();
      parameters.setServerNames(List.of(new SNIHostName(sni)));
      if (protocols.length > 0) {
        parameters.setProtocols(protocols);
      }
      socket.setSSLParameters(parameters);
      socket.startHandshake();
      assertThat(socket.getSession().getProtocol()).isEqualTo("TLSv1.3");
      return (X509Certificate) socket.getSession().getPeerCertificates()[0];
    }
  }

  @Test
  void anUploadedCertificateIsServedBySniOverHttp2WithoutARestart() throws Exception {
    assertThat(served(DOMAIN).getSubjectX500Principal().getName()).doesNotContain(DOMAIN);
    TestPki.Issued leaf = TestPki.server(ca, List.of(DOMAIN));
    Http.Response uploaded = upload(leaf.certificatePem(), leaf.keyPem(), ca.certificatePem());
    assertThat(uploaded.status()).as(uploaded.text()).isEqualTo(201);
    assertThat(uploaded.json().get("names").get(0).asText()).isEqualTo(DOMAIN);
    assertThat(uploaded.text()).doesNotContain("PRIVATE KEY");
    assertThat(server
            .http
            .get("/v1/organizations/" + orgId + "/domain")
            .bearer(key)
            .send()
            .json()
            .at("/data/0/status")
            .asText())
        .isEqualTo("active");

    assertThat(served(DOMAIN)).isEqualTo(leaf.certificate());
    assertThat(served("localhost")).isNotEqualTo(leaf.certificate());

    // A real HTTP/2 client that trusts only the test CA reaches the organization by its domain.
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    trust.setCertificateEntry("ca", ca.certificate());
    TrustManagerFactory factory =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    factory.init(trust);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, factory.getTrustManagers(), null);
    try (HttpClient client = HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_2)
        .proxy(HttpClient.Builder.NO_PROXY)
        .sslContext(context)
        .build()) {
      HttpResponse<String> response = client.send(
          HttpRequest.newBuilder(
                  URI.create("https://" + DOMAIN + ":" + server.engram.tlsPort() + "/v1/models"))
              .header("Authorization", "Bearer " + key)
              .build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.version()).isEqualTo(HttpClient.Version.HTTP_2);
      assertThat(response.sslSession().orElseThrow().getProtocol()).isEqualTo("TLSv1.3");
    }

    // openssl, as an operator would check it.
    String openssl = run(
        "openssl",
        "s_client",
        "-connect",
        "127.0.0.1:" + server.engram.tlsPort(),
        "-servername",
        DOMAIN,
        "-alpn",
        "h2");
    assertThat(openssl)
        .contains("ALPN protocol: h2")
        .contains("TLSv1.3")
        .contains("CN = " + DOMAIN);
    String old = run(
        "openssl",
        "s_client",
        "-connect",
        "127.0.0.1:" + server.engram.tlsPort(),
        "-servername",
        DOMAIN,
        "-tls1_2");
    assertThat(old)
        .doesNotContain("CN = " + DOMAIN)
        .containsAnyOf("alert", "no protocols", "handshake failure", "error");
  }

  @Test
  void tls12OnlyClientsAreRefusedByDefault() {
    assertThatThrownBy(() -> served("localhost", "TLSv1.2")).isInstanceOf(IOException.class);
  }

  @Test
  void badUploadsAreRefusedNamingWhatIsWrong() {
    TestPki.Issued good = TestPki.server(ca, List.of(DOMAIN));
    TestPki.Issued otherCa = TestPki.authority("Another CA");
    TestPki.Issued expired = TestPki.server(
        ca,
        List.of(DOMAIN),
        "EC",
        Instant.now().minus(Duration.ofDays(30)),
        Instant.now().minus(Duration.ofDays(1)));
    TestPki.Issued weak = TestPki.server(
        ca,
        List.of(DOMAIN),
        "RSA-1024",
        Instant.now().minus(Duration.ofDays(1)),
        Instant.now().plus(Duration.ofDays(30)));
    TestPki.Issued elsewhere = TestPki.server(ca, List.of("not-ours.example"));
    Object[][] cases = {
      {upload(null, good.keyPem(), ca.certificatePem()), "certificate"},
      {upload(good.certificatePem(), null, ca.certificatePem()), "private_key"},
      {upload(good.certificatePem(), good.keyPem(), null), "ca_bundle"},
      {upload("not a pem", good.keyPem(), ca.certificatePem()), "certificate"},
      {
        upload(
            good.certificatePem(),
            "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
            ca.certificatePem()),
        "private_key"
      },
      {upload(good.certificatePem(), elsewhere.keyPem(), ca.certificatePem()), "private_key"},
      {upload(good.certificatePem(), good.keyPem(), otherCa.certificatePem()), "ca_bundle"},
      {upload(expired.certificatePem(), expired.keyPem(), ca.certificatePem()), "certificate"},
      {upload(weak.certificatePem(), weak.keyPem(), ca.certificatePem()), "private_key"},
      {upload(elsewhere.certificatePem(), elsewhere.keyPem(), ca.certificatePem()), "certificate"},
    };
    for (Object[] c : cases) {
      Http.Response response = (Http.Response) c[0];
      assertThat(response.status()).as(response.text()).isEqualTo(400);
      assertThat(response.json().at("/error/param").asText())
          .as(response.text())
          .isEqualTo(c[1]);
    }
  }

  @Test
  void aCertificateAboutToExpireRaisesTheOrganizationsAlert() {
    // A domain of its own, so the certificate served for DOMAIN is not this test's.
    JsonNode domain = post("/domain", "{\"domain\":\"soon.acme-tls.example\"}").json();
    dns.putTxt(
        domain.at("/verification/name").asText(),
        domain.at("/verification/value").asText());
    post("/domain/" + domain.get("id").asText() + "/verify", "{}");
    TestPki.Issued soon = TestPki.server(
        ca,
        List.of("soon.acme-tls.example"),
        "EC",
        Instant.now().minus(Duration.ofDays(80)),
        Instant.now().plus(Duration.ofDays(10)));
    Http.Response uploaded = upload(soon.certificatePem(), soon.keyPem(), ca.certificatePem());
    assertThat(uploaded.status()).as(uploaded.text()).isEqualTo(201);
    server.engram.network().watchExpiry();
    JsonNode alerts = server
        .http
        .get("/v1/organizations/" + orgId + "/alerts")
        .bearer(key)
        .send()
        .json();
    assertThat(alerts.toString()).contains("certificate_expiring").contains("expires in");
    assertThat(server.http.get("/metrics").bearer(TestServer.ADMIN_KEY).send().text())
        .contains("engram_tls_certificates_expiring");
    assertThat(server
            .http
            .delete("/v1/organizations/" + orgId + "/ssl/"
                + uploaded.json().get("id").asText())
            .bearer(key)
            .send()
            .status())
        .isEqualTo(204);
  }

  private static String run(String... command) throws Exception {
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    process.getOutputStream().close();
    assertThat(process.waitFor(20, TimeUnit.SECONDS)).isTrue();
    return new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
  }

  /** Accepts any server certificate: these checks read the certificate, they do not trust it. */
  private static final class TrustAll implements X509TrustManager {
    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return new X509Certificate[0];
    }
  }
}
