package io.engram.support;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One HTTP/1.1 request over a plain socket, for what Java's HttpClient will not do: send from a
 * chosen local address (a loopback alias such as 127.0.0.2) and set the Host header.
 */
public final class RawHttp {
  /** The answer: status, headers (lower-cased names) and body. */
  public record Response(int status, Map<String, String> headers, String body) {
    public JsonNode json() {
      return Json.read(body, JsonNode.class);
    }
  }

  private RawHttp() {}

  /**
   * @param from the local address to send from (null: any)
   * @param headers name, value, ... (Host, Connection and Content-Length are set here)
   */
  public static Response send(
      InetAddress from,
      int port,
      String host,
      String method,
      String path,
      String body,
      String... headers)
      throws IOException {
    try (Socket socket = new Socket()) {
      if (from != null) {
        socket.bind(new InetSocketAddress(from, 0));
      }
      socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 5000);
      socket.setSoTimeout(20_000);
      byte[] content = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
      StringBuilder head = new StringBuilder()
          .append(method)
          .append(' ')
          .append(path)
          .append(" HTTP/1.1\r\n")
          .append("Host: ")
          .append(host)
          .append("\r\n")
          .append("Connection: close\r\n")
          .append("Content-Length: ")
          .append(content.length)
          .append("\r\n");
      if (body != null) {
        head.append("Content-Type: application/json\r\n");
      }
      for (int i = 0; i < headers.length; i += 2) {
        head.append(headers[i]).append(": ").append(headers[i + 1]).append("\r\n");
      }
      head.append("\r\n");
      socket.getOutputStream().write(head.toString().getBytes(StandardCharsets.UTF_8));
      socket.getOutputStream().write(content);
      socket.getOutputStream().flush();
      return parse(socket.getInputStream());
    }
  }

  private static Response parse(InputStream in) throws IOException {
    byte[] all = in.readAllBytes();
    String text = new String(all, StandardCharsets.ISO_8859_1);
    int end = text.indexOf("\r\n\r\n");
    String[] lines = text.substring(0, end).split("\r\n");
    int status = Integer.parseInt(lines[0].split(" ")[1]);
    Map<String, String> headers = new LinkedHashMap<>();
    for (int i = 1; i < lines.length; i++) {
      int colon = lines[i].indexOf(':');
      headers.put(
          lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT),
          lines[i].substring(colon + 1).trim());
    }
    byte[] rest = java.util.Arrays.copyOfRange(all, end + 4, all.length);
    if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
      rest = dechunk(rest);
    }
    return new Response(status, headers, new String(rest, StandardCharsets.UTF_8));
  }

  private static byte[] dechunk(byte[] body) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int at = 0;
    while (at < body.length) {
      int lineEnd = at;
      while (lineEnd + 1 < body.length && !(body[lineEnd] == '\r' && body[lineEnd + 1] == '\n')) {
        lineEnd++;
      }
      String sizeText =
          new String(body, at, lineEnd - at, StandardCharsets.ISO_8859_1).split(";")[0].trim();
      int size = sizeText.isEmpty() ? 0 : Integer.parseInt(sizeText, 16);
      if (size == 0) {
        break;
      }
      out.write(body, lineEnd + 2, size);
      at = lineEnd + 2 + size + 2;
    }
    return out.toByteArray();
  }
}
