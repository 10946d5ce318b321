package io.engram.platform.httpclient;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.Seeded;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Chunked bodies cut at random: random chunk sizes, hex case, extensions and trailers, written in
 * random pieces and read with random buffer sizes, always come out as the bytes that went in, and
 * the connection stays usable for the next answer.
 */
@ExtendWith(Seeded.class)
class ChunkedBodyRandomizedTest {
  private static final String[] JSON = {"Content-Type", "application/json"};
  private static final byte[] BODY = "{}".getBytes(StandardCharsets.UTF_8);

  /** A body and its chunked encoding. */
  private record Encoded(byte[] body, byte[] wire) {}

  private static Encoded encode(Random random) {
    byte[] body = new byte[random.nextInt(64 * 1024)];
    random.nextBytes(body);
    ByteArrayOutputStream wire = new ByteArrayOutputStream();
    int at = 0;
    while (at < body.length) {
      int size = Math.min(
          body.length - at,
          random.nextInt(3) == 0 ? 1 + random.nextInt(8) : 1 + random.nextInt(9000));
      String hex = Integer.toHexString(size);
      hex = random.nextBoolean() ? hex.toUpperCase(Locale.ROOT) : hex;
      String extension = random.nextInt(4) == 0 ? ";name=" + random.nextInt(100) : "";
      wire.writeBytes((hex + extension + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
      wire.write(body, at, size);
      wire.writeBytes("\r\n".getBytes(StandardCharsets.ISO_8859_1));
      at += size;
    }
    wire.writeBytes("0\r\n".getBytes(StandardCharsets.ISO_8859_1));
    for (int trailers = random.nextInt(3); trailers > 0; trailers--) {
      wire.writeBytes(("X-Trailer-" + trailers + ": " + random.nextInt() + "\r\n")
          .getBytes(StandardCharsets.ISO_8859_1));
    }
    wire.writeBytes("\r\n".getBytes(StandardCharsets.ISO_8859_1));
    return new Encoded(body, wire.toByteArray());
  }

  @Test
  void anyCuttingOfAChunkedBodyDecodesToTheSameBytes(Random random) throws Exception {
    int rounds = 40;
    Encoded[] bodies = new Encoded[rounds];
    for (int i = 0; i < rounds; i++) {
      bodies[i] = encode(random);
    }
    long writerSeed = random.nextLong();
    int[] served = {0};
    try (ScriptedOrigin origin = new ScriptedOrigin((head, body, out) -> {
          Random pieces = new Random(writerSeed + served[0]);
          byte[] wire = bodies[served[0]++].wire();
          out.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
              .getBytes(StandardCharsets.ISO_8859_1));
          for (int at = 0; at < wire.length; ) {
            int piece = Math.min(wire.length - at, 1 + pieces.nextInt(4096));
            out.write(wire, at, piece);
            out.flush();
            at += piece;
          }
          return true;
        });
        OriginClient client = new OriginClient(
            URI.create("http://127.0.0.1:" + origin.port() + "/v1/"),
            Duration.ofSeconds(2),
            Duration.ofSeconds(5),
            null)) {
      for (int i = 0; i < rounds; i++) {
        try (ClientResponse response = client.send("POST", "/v1/x", JSON, BODY);
            InputStream in = response.body()) {
          ByteArrayOutputStream read = new ByteArrayOutputStream();
          byte[] buffer = new byte[1 + random.nextInt(10_000)];
          for (int n; (n = in.read(buffer, 0, 1 + random.nextInt(buffer.length))) >= 0; ) {
            read.write(buffer, 0, n);
          }
          assertThat(read.toByteArray()).as("body %d", i).isEqualTo(bodies[i].body());
        }
      }
      assertThat(origin.connections())
          .as("one kept-alive connection for every body")
          .isEqualTo(1);
    }
  }
}
