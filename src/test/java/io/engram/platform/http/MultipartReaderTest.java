package io.engram.platform.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The streaming multipart reader on bodies built byte by byte, including ones that trickle in. */
class MultipartReaderTest {
  private static final String TYPE = "multipart/form-data; boundary=\"XyZ\"";

  private static byte[] body(String preamble, byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(preamble.getBytes(StandardCharsets.US_ASCII));
    for (int i = 0; i < parts.length; i++) {
      out.writeBytes(("--XyZ\r\nContent-Disposition: form-data; name=\"p" + i
              + "\"; filename=\"f\\\"q\"\r\n\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      out.writeBytes(parts[i]);
      out.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
    }
    out.writeBytes("--XyZ--\r\n".getBytes(StandardCharsets.US_ASCII));
    return out.toByteArray();
  }

  /** An input stream that hands out at most {@code step} bytes per read, as a slow network does. */
  private static InputStream trickle(byte[] bytes, int step) {
    return new ByteArrayInputStream(bytes) {
      @Override
      public synchronized int read(byte[] b, int off, int len) {
        return super.read(b, off, Math.min(len, step));
      }
    };
  }

  private static MultipartReader reader(InputStream in, long max) {
    return MultipartReader.of(
        TYPE, in, max, () -> MultipartReader.tooLarge(max, "the test's limit"));
  }

  @Test
  void largePartsWithBoundaryLookalikesComeBackByteForByte() throws IOException {
    byte[] big = new byte[300_000];
    new Random(3).nextBytes(big);
    // Almost-delimiters inside the content, one of them across the reader's 64 KiB buffer edge.
    byte[] lookalike = "\r\n--XyY\r\n--Xy".getBytes(StandardCharsets.US_ASCII);
    System.arraycopy(lookalike, 0, big, 65_530, lookalike.length);
    System.arraycopy(lookalike, 0, big, big.length - lookalike.length, lookalike.length);
    byte[] small = "model".getBytes(StandardCharsets.UTF_8);
    for (int step : new int[] {1, 7, 70_000}) {
      MultipartReader reader =
          reader(trickle(body("a preamble\r\n", big, small, new byte[0]), step), 1 << 20);
      List<byte[]> read = new ArrayList<>();
      var part = reader.next();
      while (part.isPresent()) {
        assertThat(part.get().filename()).isEqualTo("f\"q");
        read.add(reader.content().readAllBytes());
        part = reader.next();
      }
      assertThat(read).hasSize(3);
      assertThat(read.get(0)).isEqualTo(big);
      assertThat(read.get(1)).isEqualTo(small);
      assertThat(read.get(2)).isEmpty();
    }
  }

  @Test
  void anUnreadPartIsSkipped() throws IOException {
    MultipartReader reader =
        reader(new ByteArrayInputStream(body("", new byte[100_000], "b".getBytes())), 1 << 20);
    assertThat(reader.next().get().name()).isEqualTo("p0");
    assertThat(reader.next().get().name()).isEqualTo("p1");
    assertThat(reader.text("p1", 10)).isEqualTo("b");
    assertThat(reader.next()).isEmpty();
  }

  @Test
  void theLimitHoldsWhileTheBytesArrive() {
    MultipartReader reader = reader(trickle(body("", new byte[50_000]), 1000), 20_000);
    assertThatThrownBy(() -> {
          reader.next();
          reader.content().readAllBytes();
        })
        .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.status()).isEqualTo(413));
  }

  @Test
  void malformedBodiesAreBadRequests() {
    byte[] whole = body("", "x".getBytes());
    byte[] cut = java.util.Arrays.copyOf(whole, whole.length - 9);
    assertThatThrownBy(() -> {
          MultipartReader reader = reader(new ByteArrayInputStream(cut), 1000);
          while (reader.next().isPresent()) {
            reader.content().readAllBytes();
          }
        })
        .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.status()).isEqualTo(400));
    byte[] noName = "--XyZ\r\nContent-Disposition: form-data\r\n\r\nx\r\n--XyZ--"
        .getBytes(StandardCharsets.US_ASCII);
    assertThatThrownBy(() -> reader(new ByteArrayInputStream(noName), 1000).next())
        .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.status()).isEqualTo(400));
    assertThatThrownBy(
            () -> MultipartReader.of("application/json", InputStream.nullInputStream(), 10, null))
        .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.status()).isEqualTo(415));
    assertThatThrownBy(() ->
            MultipartReader.of("multipart/form-data", InputStream.nullInputStream(), 10, null))
        .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.status()).isEqualTo(400));
  }
}
