package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.FakeUpstream;
import io.engram.support.Http;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The organization's variables that act on its inference: DEFAULT_MODEL, REQUEST_TIMEOUT and
 * MAX_MODEL_SIZE_GB, each proved through real requests. The server leaves all three unset, so the
 * organization's own value is the one in force (an operator's value would outrank it).
 */
class OrganizationVariablesEnforcementTest {
  @RegisterExtension
  static final GatewayFixture gateway = new GatewayFixture("seed", Map.of("DEFAULT_MODEL", ""));

  private static void setVariable(String name, String value) {
    Http.Response response = gateway.server.asOperator(gateway
        .server
        .http
        .post("/v1/organizations/" + gateway.orgId + "/env")
        .json("{\"variables\":{\"" + name + "\":\"" + value + "\"}}"));
    assertThat(response.status()).as(response.text()).isEqualTo(200);
  }

  private static void deleteVariable(String name) {
    gateway.server.asOperator(
        gateway.server.http.delete("/v1/organizations/" + gateway.orgId + "/env/" + name));
  }

  private static final String WITHOUT_MODEL =
      "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"memory\":false}";

  @Test
  void defaultModelLetsARequestLeaveOutItsModel() {
    Http.Response refused = gateway.chat(gateway.token, WITHOUT_MODEL).send();
    assertThat(refused.status()).isEqualTo(400);
    assertThat(refused.json().at("/error/param").asText()).isEqualTo("model");
    assertThat(refused.json().at("/error/message").asText()).contains("DEFAULT_MODEL");
    setVariable("DEFAULT_MODEL", GatewayFixture.UPSTREAM_MODEL);
    try {
      Http.Response answered = gateway.chat(gateway.token, WITHOUT_MODEL).send();
      assertThat(answered.status()).as(answered.text()).isEqualTo(200);
      assertThat(answered.json().get("model").asText()).isEqualTo(GatewayFixture.UPSTREAM_MODEL);
    } finally {
      deleteVariable("DEFAULT_MODEL");
    }
  }

  @Test
  void requestTimeoutIsTheOrganizations() {
    setVariable("REQUEST_TIMEOUT", "10");
    try {
      gateway.upstream.script(FakeUpstream.Script.NORMAL.headerDelay(12_000));
      long start = System.nanoTime();
      Http.Response timedOut = gateway
          .chat(
              gateway.token,
              "{\"model\":\"" + GatewayFixture.UPSTREAM_MODEL
                  + "\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"memory\":false}")
          .send();
      Duration waited = Duration.ofNanos(System.nanoTime() - start);
      assertThat(timedOut.status()).isEqualTo(504);
      assertThat(timedOut.json().at("/error/message").asText()).contains("10 seconds");
      assertThat(waited).isBetween(Duration.ofSeconds(9), Duration.ofSeconds(12));
    } finally {
      gateway.upstream.script(FakeUpstream.Script.NORMAL);
      deleteVariable("REQUEST_TIMEOUT");
    }
  }

  @Test
  void maxModelSizeIsTheOrganizations() throws Exception {
    String key = gateway.server.apiKey(gateway.orgId, 1000, "models");
    setVariable("MAX_MODEL_SIZE_GB", "1");
    try (Socket socket = new Socket("127.0.0.1", gateway.server.engram.port())) {
      socket.setSoTimeout(10_000);
      OutputStream out = socket.getOutputStream();
      out.write(("POST /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key
              + "\r\nContent-Type: multipart/form-data; boundary=b\r\n"
              + "Content-Length: 2147483648\r\n\r\n")
          .getBytes(StandardCharsets.UTF_8));
      out.flush();
      InputStream in = socket.getInputStream();
      StringBuilder answer = new StringBuilder();
      byte[] buffer = new byte[4096];
      int read;
      try {
        while (!answer.toString().contains("}}") && (read = in.read(buffer)) > 0) {
          answer.append(new String(buffer, 0, read, StandardCharsets.UTF_8));
        }
      } catch (java.net.SocketTimeoutException e) {
        throw new AssertionError("no whole answer; so far: " + answer, e);
      }
      assertThat(answer.toString()).startsWith("HTTP/1.1 413").contains("MAX_MODEL_SIZE_GB");
    } finally {
      deleteVariable("MAX_MODEL_SIZE_GB");
    }
  }
}
