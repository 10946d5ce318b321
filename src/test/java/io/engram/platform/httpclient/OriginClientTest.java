package io.engram.platform.httpclient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The upstream client against a server that writes its answers byte for byte. */
class OriginClientTest {
  private static final byte[] BODY = "{\"q\":1}".getBytes(StandardCharsets.UTF_8);
  private static final String[] JSON = {"Content-Type", "application/json"};

  private static OriginClient client(ScriptedOrigin origin, Duration readTimeout) {
    return new OriginClient(
        URI.create("http://127.0.0.1:" + origin.port() + "/v1/"),
        Duration.ofSeconds(2),
        readTimeout,
        null);
  }

  private static String text(ClientResponse response) throws IOException {
    try (response;
        InputStream body = response.body()) {
      return new String(body.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  @Test
  void sendsTheRequestAndKeepsTheConnectionForTheNext() throws Exception {
    try (ScriptedOrigin origin = new ScriptedOrigin((head, body, out) -> {
          ScriptedOrigin.write(
              out,
              "HTTP/1.1 200 OK\r\nContent-Length: " + body.length + "\r\n\r\n"
                  + new String(body, StandardCharsets.UTF_8));
          return true;
        });
        OriginClient client = client(origin, Duration.ofSeconds(2))) {
      for (int i = 0; i < 3; i++) {
        ClientResponse response = client.send("POST", "/v1/chat/completions", JSON, BODY);
        assertThat(response.status()).isEqualTo(200);
        assertThat(text(response)).isEqualTo("{\"q\":1}");
      }
      assertThat(origin.connections()).isEqualTo(1);
      assertThat(client.connectionsOpened()).isEqualTo(1);
      assertThat(origin.requests.getFirst())
          .startsWith("POST /v1/chat/completions HTTP/1.1\r\n")
          .contains("Host: 127.0.0.1:" + origin.port() + "\r\n")
          .contains("Content-Type: application/json\r\n")
          .contains("Content-Length: 7\r\n");
    }
  }

  @Test
  void decodesChunkedBodiesWithExtensionsAndTrailersAndSkipsInterimAnswers() throws Exception {
    try (ScriptedOrigin origin = new ScriptedOrigin((head, body, out) -> {
          ScriptedOrigin.write(
              out,
              "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
                  + "X-Test: a\r\n\r\n5;name=value\r\nHello\r\n");
          ScriptedOrigin.write(out, "7\r\n, world\r\nA\r\n from HTTP\r\n0\r\nTrailer: x\r\n\r\n");
          return true;
        });
        OriginClient client = client(origin, Duration.ofSeconds(2))) {
      ClientResponse response = client.send("POST", "/v1/x", JSON, BODY);
      assertThat(response.header("x-test")).contains("a");
      assertThat(text(response)).isEqualTo("Hello, world from HTTP");
      assertThat(text(client.send("POST", "/v1/x", JSON, BODY)))
          .isEqualTo("Hello, world from HTTP");
      assertThat(origin.connections()).isEqualTo(1);
    }
  }

  @Test
  void aBodyCutBetweenChunksIsReportedAsCutInTheBody() throws Exception {
    try (ScriptedOrigin origin = new ScriptedOrigin((head, body, out) -> {
          ScriptedOrigin.write(
              out, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nHello\r\n");
          return false; // the connection closes where the next chunk's size should be
        });
        OriginClient client = client(origin, Duration.ofSeconds(2))) {
      ClientResponse response = client.send("POST", "/v1/x", JSON, BODY);
      assertThatThrownBy(() -> text(response))
          .isInstanceOf(java.io.EOFException.class)
          .hasMessageContaining("inside a chunked body");
    }
  }

  @Test
  void aChunkIsHandedOnBeforeItsLineEndArrives() throws Exception {
    CountDownLatch firstRead = new CountDownLatch(1);
    try (ScriptedOrigin origin = new ScriptedOrigin((head, body, out) -> {
          ScriptedOrigin.write(
              out, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nfirst");
          assertThat(firstRead.await(5, TimeUnit.SECONDS)).isTrue();
          ScriptedOrigin.write(out, "\r\n0\r\n\r\n");
          return true;
        });
        OriginClient client = client(origin, Duration.ofSeconds(5))) {
      try (ClientResponse response = client.send("POST", "/v1/x", JSON, BODY)) {
        byte[] buffer = new byte[64];
        int read = response.body().read(buffer);
        assertThat(new String(buffer, 0, read, StandardCharsets.UTF_8)).isEqualTo("first");
        firstRead.countDown();
        assertThat(response.body().read(buffer)).isEqualTo(-1);
      }
    }
  }

  @Test
  void aKeptConnectionTheServerClosedWhileIdleIsReplacedAndTheRequestSentAgain() throws Exception {
    try (ScriptedOrigin origin = new ScriptedOrigin((head, body, out) -> {
          ScriptedOrigin.write(out, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
          return false; // closes without saying so, as an idle keep-alive timeout does
        });
        OriginClient client = client(origin, Duration.ofSeconds(2))) {
      assertThat(text(client.send("POST", "/v1/x", JSON, BODY))).isEqualTo("ok");
      Thread.sleep(100);
      assertThat(text(client.send("POST", "/v1/x", JSON, BODY))).isEqualTo("ok");
      assertThat(origin.requests).hasSize(2);
      assertThat(client.connectionsOpened()).isEqualTo(2);
    }
  }

  @Test
  void connectionCloseAndUndelimitedBodiesAreNotReused() throws Exception {
    try (ScriptedOrigin origin = new ScriptedOrigin((head, body, out) -> {
          boolean first = head.contains("/first");
          ScriptedOrigin.write(
              out,
              first
                  ? "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\na"
                  : "HTTP/1.1 200 OK\r\n\r\nuntil close");
          return false;
        });
        OriginClient client = client(origin, Duration.ofSeconds(2))) {
      assertThat(text(client.send("POST", "/first", JSON, BODY))).isEqualTo("a");
      assertThat(text(client.send("POST", "/second", JSON, BODY))).isEqualTo("until close");
      assertThat(text(client.send("POST", "/first", JSON, BODY))).isEqualTo("a");
      assertThat(client.connectionsOpened()).isEqualTo(3);
    }
  }

  @Test
  void aBodyClosedBeforeItsEndDropsTheConnection() throws Exception {
    try (ScriptedOrigin origin = new ScriptedOrigin((head, body, out) -> {
          ScriptedOrigin.write(out, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part");
          Thread.sleep(500);
          return false;
        });
        OriginClient client = client(origin, Duration.ofSeconds(2))) {
      ClientResponse response = client.send("POST", "/v1/x", JSON, BODY);
      assertThat(response.body().readNBytes(4)).hasSize(4);
      long started = System.nanoTime();
      response.close();
      assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofMillis(300));
      client.send("POST", "/v1/x", JSON, BODY).abort();
      assertThat(client.connectionsOpened()).isEqualTo(2);
    }
  }

  @Test
  void theReadTimeoutBoundsTheWaitForTheAnswerAndEverySilenceInTheBody() throws Exception {
    try (ScriptedOrigin origin = new ScriptedOrigin((head, body, out) -> {
          if (head.contains("/silent-body")) {
            ScriptedOrigin.write(
                out, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n");
          }
          Thread.sleep(3_000);
          return false;
        });
        OriginClient client = client(origin, Duration.ofMillis(300))) {
      long started = System.nanoTime();
      assertThatThrownBy(() -> client.send("POST", "/no-answer", JSON, BODY))
          .isInstanceOf(SocketTimeoutException.class);
      assertThat(Duration.ofNanos(System.nanoTime() - started))
          .isBetween(Duration.ofMillis(250), Duration.ofSeconds(2));
      assertThat(origin.requests).hasSize(1); // a timeout is not a stale connection: not sent again
      try (ClientResponse response = client.send("POST", "/silent-body", JSON, BODY)) {
        InputStream body = response.body();
        assertThat(body.readNBytes(2)).isEqualTo("hi".getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(body::read).isInstanceOf(SocketTimeoutException.class);
      }
    }
  }

  @Test
  void abortFromAnotherThreadEndsABlockedRead() throws Exception {
    try (ScriptedOrigin origin = new ScriptedOrigin((head, body, out) -> {
          ScriptedOrigin.write(out, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
          Thread.sleep(5_000);
          return false;
        });
        OriginClient client = client(origin, Duration.ofSeconds(10))) {
      ClientResponse response = client.send("POST", "/v1/x", JSON, BODY);
      Thread.ofVirtual().start(() -> {
        sleep(200);
        response.abort();
      });
      long started = System.nanoTime();
      assertThatThrownBy(() -> response.body().read()).isInstanceOf(IOException.class);
      assertThat(response.aborted()).isTrue();
      assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(3));
      response.close();
    }
  }

  @Test
  void malformedAnswersAreRefused() throws Exception {
    try (ScriptedOrigin origin = new ScriptedOrigin((head, body, out) -> {
          String path = head.substring(5, head.indexOf(' ', 5));
          ScriptedOrigin.write(
              out,
              switch (path) {
                case "/status" -> "SMTP 220 hello\r\n\r\n";
                case "/header" -> "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n";
                case "/headers" -> "HTTP/1.1 200 OK\r\n" + "X-A: 1\r\n".repeat(300) + "\r\n";
                case "/line" -> "HTTP/1.1 200 OK\r\nX-Long: " + "a".repeat(20_000) + "\r\n\r\n";
                case "/length" -> "HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n";
                case "/coding" -> "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n";
                case "/switch" -> "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n";
                case "/chunk" -> "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n";
                case "/overlong" ->
                  "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n";
                default -> "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort";
              });
          return false;
        });
        OriginClient client = client(origin, Duration.ofSeconds(2))) {
      for (String path :
          new String[] {"/status", "/header", "/headers", "/line", "/length", "/coding", "/switch"
          }) {
        assertThatThrownBy(() -> client.send("POST", path, JSON, BODY))
            .as(path)
            .isInstanceOf(MalformedResponseException.class);
      }
      for (String path : new String[] {"/chunk", "/overlong", "/cut"}) {
        assertThatThrownBy(() -> text(client.send("POST", path, JSON, BODY)))
            .as(path)
            .isInstanceOf(IOException.class);
      }
    }
  }

  @Test
  void anOriginThatCannotBeReachedIsUnreachable() throws Exception {
    int port;
    try (ServerSocket closed = new ServerSocket(0)) {
      port = closed.getLocalPort();
    }
    try (OriginClient client = new OriginClient(
        URI.create("http://127.0.0.1:" + port),
        Duration.ofSeconds(1),
        Duration.ofSeconds(1),
        null)) {
      assertThatThrownBy(() -> client.send("POST", "/", JSON, BODY))
          .isInstanceOf(UnreachableException.class);
    }
  }

  @Test
  void headerValuesCannotSmuggleLines() throws Exception {
    try (ScriptedOrigin origin = new ScriptedOrigin((head, body, out) -> false);
        OriginClient client = client(origin, Duration.ofSeconds(1))) {
      assertThatThrownBy(() -> client.send("POST", "/", new String[] {"X-A", "1\r\nX-B: 2"}, BODY))
          .isInstanceOf(IllegalArgumentException.class);
      assertThat(origin.requests).isEmpty();
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
