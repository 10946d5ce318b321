package io.engram.platform.httpclient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** An https upstream: a certificate made here by the JDK's keytool, served by the JDK's HttpsServer. */
class OriginClientTlsTest {
  private static final char[] PASSWORD = "changeit".toCharArray();

  @TempDir
  static Path dir;

  static HttpsServer server;
  static SSLContext trusting;

  @BeforeAll
  static void start() throws Exception {
    Path store = dir.resolve("upstream.p12");
    Process keytool = new ProcessBuilder(
            Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
            "-genkeypair",
            "-alias",
            "upstream",
            "-keyalg",
            "EC",
            "-dname",
            "CN=localhost",
            "-ext",
            "SAN=ip:127.0.0.1,dns:localhost",
            "-validity",
            "2",
            "-storetype",
            "PKCS12",
            "-keystore",
            store.toString(),
            "-storepass",
            "changeit")
        .redirectErrorStream(true)
        .start();
    assertThat(keytool.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(keytool.exitValue())
        .as(new String(keytool.getInputStream().readAllBytes()))
        .isZero();
    KeyStore keys = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(store)) {
      keys.load(in, PASSWORD);
    }
    KeyManagerFactory keyManagers =
        KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    keyManagers.init(keys, PASSWORD);
    SSLContext serverContext = SSLContext.getInstance("TLS");
    serverContext.init(keyManagers.getKeyManagers(), null, null);
    TrustManagerFactory trust =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    trust.init(keys);
    trusting = SSLContext.getInstance("TLS");
    trusting.init(null, trust.getTrustManagers(), null);

    // Every address, so that 127.0.0.2 (a name the certificate does not carry) reaches it too.
    server = HttpsServer.create(new InetSocketAddress(InetAddress.getByName("0.0.0.0"), 0), 0);
    server.setHttpsConfigurator(new HttpsConfigurator(serverContext));
    server.createContext("/v1/echo", exchange -> {
      byte[] body = exchange.getRequestBody().readAllBytes();
      exchange.sendResponseHeaders(200, body.length);
      exchange.getResponseBody().write(body);
      exchange.close();
    });
    server.createContext("/v1/silent", exchange -> {
      exchange.getRequestBody().readAllBytes();
      try {
        Thread.sleep(3_000); // answers nothing within the client's read timeout
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      exchange.close();
    });
    server.setExecutor(java.util.concurrent.Executors.newCachedThreadPool());
    server.start();
  }

  @AfterAll
  static void stop() {
    server.stop(0);
  }

  @Test
  void talksTlsToATrustedCertificateAndChecksItsName() throws Exception {
    URI origin = URI.create("https://127.0.0.1:" + server.getAddress().getPort());
    try (OriginClient client = new OriginClient(
        origin, Duration.ofSeconds(5), Duration.ofSeconds(5), trusting.getSocketFactory())) {
      for (int i = 0; i < 2; i++) {
        try (ClientResponse response = client.send(
            "POST", "/v1/echo", new String[0], "secure".getBytes(StandardCharsets.UTF_8))) {
          assertThat(response.status()).isEqualTo(200);
          assertThat(new String(response.body().readAllBytes(), StandardCharsets.UTF_8))
              .isEqualTo("secure");
        }
      }
      assertThat(client.connectionsOpened()).isEqualTo(1);
    }
  }

  /**
   * The read timeout ends a read that waits on a TLS connection as on a plain one: the watchdog
   * closes the TCP socket under it, and closing does not wait for the silent peer.
   */
  @Test
  void aSilentTlsOriginTimesOutWithinTheReadTimeout() throws Exception {
    URI origin = URI.create("https://127.0.0.1:" + server.getAddress().getPort());
    try (OriginClient client = new OriginClient(
        origin, Duration.ofSeconds(5), Duration.ofMillis(300), trusting.getSocketFactory())) {
      long started = System.nanoTime();
      assertThatThrownBy(() -> client.send("POST", "/v1/silent", new String[0], new byte[0]))
          .isInstanceOf(java.net.SocketTimeoutException.class);
      assertThat(Duration.ofNanos(System.nanoTime() - started))
          .isBetween(Duration.ofMillis(250), Duration.ofMillis(2_000));
      try (ClientResponse response = client.send(
          "POST", "/v1/echo", new String[0], "again".getBytes(StandardCharsets.UTF_8))) {
        assertThat(response.status()).isEqualTo(200);
      }
    }
  }

  @Test
  void anUntrustedCertificateOrAnotherNameIsRefused() {
    int port = server.getAddress().getPort();
    try (OriginClient untrusted = new OriginClient(
        URI.create("https://127.0.0.1:" + port),
        Duration.ofSeconds(5),
        Duration.ofSeconds(5),
        null)) {
      assertThatThrownBy(() -> untrusted.send("POST", "/v1/echo", new String[0], new byte[0]))
          .isInstanceOf(UnreachableException.class)
          .hasCauseInstanceOf(javax.net.ssl.SSLHandshakeException.class);
    }
    // The certificate names 127.0.0.1 and localhost, not 127.0.0.2.
    try (OriginClient wrongName = new OriginClient(
        URI.create("https://127.0.0.2:" + port),
        Duration.ofSeconds(5),
        Duration.ofSeconds(5),
        trusting.getSocketFactory())) {
      assertThatThrownBy(() -> wrongName.send("POST", "/v1/echo", new String[0], new byte[0]))
          .isInstanceOf(UnreachableException.class)
          .hasCauseInstanceOf(javax.net.ssl.SSLHandshakeException.class)
          .hasMessageContaining("127.0.0.2");
    }
  }
}
