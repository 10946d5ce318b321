package io.engram.support;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/** A multipart/form-data body built in memory, as a browser or curl -F would send it. */
public final class MultipartForm {
  private final String boundary = "----engram-test-" + Long.toHexString(System.nanoTime());
  private final ByteArrayOutputStream body = new ByteArrayOutputStream();

  public MultipartForm field(String name, String value) {
    return part(
        "Content-Disposition: form-data; name=\"" + name + "\"\r\n",
        value.getBytes(StandardCharsets.UTF_8));
  }

  public MultipartForm file(String name, String filename, byte[] content) {
    return part(
        "Content-Disposition: form-data; name=\"" + name + "\"; filename=\"" + filename + "\"\r\n"
            + "Content-Type: application/octet-stream\r\n",
        content);
  }

  private MultipartForm part(String headers, byte[] content) {
    body.writeBytes(("--" + boundary + "\r\n" + headers + "\r\n").getBytes(StandardCharsets.UTF_8));
    body.writeBytes(content);
    body.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
    return this;
  }

  public String contentType() {
    return "multipart/form-data; boundary=" + boundary;
  }

  /** The body with its closing boundary. */
  public byte[] bytes() {
    ByteArrayOutputStream whole = new ByteArrayOutputStream();
    whole.writeBytes(body.toByteArray());
    whole.writeBytes(("--" + boundary + "--\r\n").getBytes(StandardCharsets.US_ASCII));
    return whole.toByteArray();
  }
}
