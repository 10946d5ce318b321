package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.management.UnixOperatingSystemMXBean;
import io.engram.support.FakeUpstream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * 1,000 streams that the client abandons midway leave nothing behind: no generation still
 * running, no upstream request still open, no concurrency slot held, no platform thread and no
 * file descriptor (socket) more than before. Numbers are printed for docs/benchmarks.md.
 */
@Isolated // counts the whole JVM's threads, descriptors or database statements
class AbortedStreamsLeakTest {
  private static final int STREAMS = 1_000;
  private static final int CONCURRENCY = 16;

  @RegisterExtension
  // Scale: 100 concurrent requests, as an abandoned stream holds its slot until the gateway
  // notices.
  static final GatewayFixture gateway = new GatewayFixture("scale", java.util.Map.of());
  /** A key whose requests per minute do not stop the run (the fixture's allows 1,000). */
  static final String key = gateway.server.apiKey(gateway.orgId, 100_000, "inference");

  @Test
  void aThousandAbortedStreamsLeakNothing() throws Exception {
    // An upstream that would stream for 40 seconds: every stream ends because its client left.
    gateway.upstream.script(
        FakeUpstream.Script.NORMAL.pieces(StreamingTest.words(2_000)).interval(20));
    abortStreams(50); // warm-up: thread pools, connection pools and JIT reach their steady size
    awaitQuiet();
    Snapshot before = Snapshot.take();
    int abandonedBefore = gateway.upstream.streamsAbandoned();
    long started = System.nanoTime();

    abortStreams(STREAMS);
    awaitQuiet();
    Snapshot after = Snapshot.take();
    System.out.printf(
        "aborted streams: %d in %d ms; platform threads %d -> %d; open file descriptors %d -> %d;"
            + " upstream requests abandoned %d; generations in flight %d; upstream in flight %d%n",
        STREAMS,
        (System.nanoTime() - started) / 1_000_000,
        before.threads,
        after.threads,
        before.descriptors,
        after.descriptors,
        gateway.upstream.streamsAbandoned() - abandonedBefore,
        gateway.server.engram.inference().generationsInFlight(),
        gateway.upstream.inFlight());

    assertThat(gateway.upstream.streamsAbandoned() - abandonedBefore).isEqualTo(STREAMS);
    assertThat(after.threads).isLessThanOrEqualTo(before.threads + 4);
    assertThat(after.descriptors).isLessThanOrEqualTo(before.descriptors + 16);
    // The gateway still serves.
    gateway.upstream.script(FakeUpstream.Script.NORMAL);
    assertThat(gateway
            .chat(gateway.key, GatewayFixture.body("still there?", ""))
            .send()
            .status())
        .isEqualTo(200);
  }

  private record Snapshot(int threads, long descriptors) {
    static Snapshot take() {
      System.gc(); // closed sockets' descriptors are released by the collector when a close raced
      var os = (UnixOperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
      return new Snapshot(
          ManagementFactory.getThreadMXBean().getThreadCount(), os.getOpenFileDescriptorCount());
    }
  }

  private static void awaitQuiet() throws InterruptedException {
    StreamingTest.awaitUntil(() -> gateway.upstream.inFlight() == 0
        && gateway.server.engram.inference().generationsInFlight() == 0
        && gateway.server.engram.inference().gateway().limits().inFlight(gateway.orgId) == 0);
  }

  /** Opens {@code count} streams, 16 at a time; each reads its first chunk, then closes the socket. */
  private static void abortStreams(int count) throws Exception {
    String body = GatewayFixture.body("Tell me everything", "\"stream\":true,\"memory\":false");
    byte[] request =
        ("POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer "
                + key + "\r\nContent-Type: application/json\r\nContent-Length: "
                + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body)
            .getBytes(StandardCharsets.UTF_8);
    try (ExecutorService clients = Executors.newFixedThreadPool(CONCURRENCY)) {
      List<Future<String>> streams = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        streams.add(clients.submit(() -> abortOne(request)));
      }
      for (Future<String> stream : streams) {
        assertThat(stream.get())
            .as("the stream started before it was abandoned")
            .startsWith("HTTP/1.1 200");
      }
    }
  }

  /** What the client saw before it left: the status line and the first chunks. */
  private static String abortOne(byte[] request) throws IOException {
    try (Socket socket = new Socket("127.0.0.1", gateway.server.engram.port())) {
      OutputStream out = socket.getOutputStream();
      out.write(request);
      out.flush();
      InputStream in = socket.getInputStream();
      StringBuilder seen = new StringBuilder();
      byte[] buffer = new byte[2048];
      while (!seen.toString().contains(" w1")) {
        int n = in.read(buffer);
        if (n < 0) {
          return seen.toString();
        }
        seen.append(new String(buffer, 0, n, StandardCharsets.UTF_8));
      }
      return seen.toString();
    } // closing the socket mid-stream is the client abandoning it
  }
}
