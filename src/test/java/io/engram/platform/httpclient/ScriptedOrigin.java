package io.engram.platform.httpclient;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A raw-socket HTTP/1.1 server whose answers a test writes byte for byte, so the client meets
 * exactly the framing, timing and connection handling under test.
 */
final class ScriptedOrigin implements AutoCloseable {

  /** Answers one request on a connection; returns false to close the connection afterwards. */
  interface Answer {
    boolean answer(String requestHead, byte[] body, OutputStream out) throws Exception;
  }

  private final ServerSocket server;
  private final Answer answer;
  private final AtomicInteger connections = new AtomicInteger();
  final List<String> requests = new CopyOnWriteArrayList<>();

  ScriptedOrigin(Answer answer) throws IOException {
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    this.answer = answer;
    Thread.ofVirtual().start(this::accept);
  }

  int port() {
    return server.getLocalPort();
  }

  int connections() {
    return connections.get();
  }

  private void accept() {
    while (!server.isClosed()) {
      try {
        Socket socket = server.accept();
        connections.incrementAndGet();
        Thread.ofVirtual().start(() -> serve(socket));
      } catch (IOException e) {
        return;
      }
    }
  }

  private void serve(Socket socket) {
    try (socket) {
      InputStream in = new BufferedInputStream(socket.getInputStream());
      OutputStream out = socket.getOutputStream();
      while (true) {
        String head = readHead(in);
        if (head == null) {
          return;
        }
        requests.add(head);
        int length = 0;
        for (String line : head.split("\r\n")) {
          if (line.toLowerCase().startsWith("content-length:")) {
            length = Integer.parseInt(line.substring(15).strip());
          }
        }
        byte[] body = in.readNBytes(length);
        if (!answer.answer(head, body, out)) {
          return;
        }
        out.flush();
      }
    } catch (Exception e) {
      // The client went away or the script ended the connection.
    }
  }

  private static String readHead(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int b;
    while ((b = in.read()) >= 0) {
      head.write(b);
      byte[] bytes = head.toByteArray();
      int n = bytes.length;
      if (n >= 4
          && bytes[n - 4] == '\r'
          && bytes[n - 3] == '\n'
          && bytes[n - 2] == '\r'
          && bytes[n - 1] == '\n') {
        return head.toString(StandardCharsets.ISO_8859_1);
      }
    }
    return null;
  }

  static void write(OutputStream out, String text) throws IOException {
    out.write(text.getBytes(StandardCharsets.UTF_8));
    out.flush();
  }

  @Override
  public void close() throws IOException {
    server.close();
  }
}
