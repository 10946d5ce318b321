package io.engram.platform.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.TestServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The plain port speaks HTTP/2 too: with prior knowledge (the client starts with the HTTP/2
 * preface, as curl --http2-prior-knowledge and gRPC-style clients do) and by upgrade (the JDK's
 * client asks with Upgrade: h2c); HTTP/1.1 clients are answered as before.
 */
class CleartextHttp2Test {

  @Test
  void thePlainPortAnswersHttp2ByPriorKnowledgeAndByUpgrade() throws Exception {
    try (TestServer server = TestServer.start()) {
      String url = "http://127.0.0.1:" + server.engram.port() + "/v1/health";

      Process curl = new ProcessBuilder(
              "curl",
              "-s",
              "--http2-prior-knowledge",
              "-o",
              "/dev/null",
              "-w",
              "%{http_version} %{http_code}",
              url)
          .redirectErrorStream(true)
          .start();
      assertThat(curl.waitFor(20, TimeUnit.SECONDS)).isTrue();
      assertThat(new String(curl.getInputStream().readAllBytes(), StandardCharsets.UTF_8))
          .isEqualTo("2 200");

      try (HttpClient client =
          HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).build()) {
        // The first request asks for the upgrade; the connection speaks HTTP/2 from its answer.
        HttpResponse<String> first = client.send(
            HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.version()).isEqualTo(HttpClient.Version.HTTP_2);
      }
      try (HttpClient client =
          HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
        HttpResponse<String> plain = client.send(
            HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(plain.statusCode()).isEqualTo(200);
        assertThat(plain.version()).isEqualTo(HttpClient.Version.HTTP_1_1);
      }
    }
  }
}
