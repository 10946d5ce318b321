package io.engram.support;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A small authoritative DNS server on 127.0.0.1 (UDP, a port of its own) that answers TXT queries
 * from a map the test fills: the custom-domain checks resolve through it, with no network. Any
 * other name is NXDOMAIN; any other type an empty answer.
 */
public final class DnsResponder implements AutoCloseable {
  private static final int TXT = 16;

  private final DatagramSocket socket;
  private final Map<String, List<String>> txt = new ConcurrentHashMap<>();
  private final Thread thread;
  private volatile int queries;

  private static DnsResponder shared;

  /** One responder for every test server that does not bring its own: it knows no name. */
  public static synchronized DnsResponder shared() {
    if (shared == null) {
      try {
        shared = new DnsResponder();
      } catch (SocketException e) {
        throw new IllegalStateException(e);
      }
    }
    return shared;
  }

  public DnsResponder() throws SocketException {
    socket = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    thread = Thread.ofPlatform().daemon().name("test-dns").start(this::serve);
  }

  /** host:port, as ENGRAM_DNS_RESOLVER takes it. */
  public String address() {
    return "127.0.0.1:" + socket.getLocalPort();
  }

  public void putTxt(String name, String... values) {
    txt.put(name.toLowerCase(Locale.ROOT), List.of(values));
  }

  public void remove(String name) {
    txt.remove(name.toLowerCase(Locale.ROOT));
  }

  public int queries() {
    return queries;
  }

  private void serve() {
    byte[] buffer = new byte[512];
    while (!socket.isClosed()) {
      DatagramPacket packet = new DatagramPacket(buffer, buffer.length);
      try {
        socket.receive(packet);
        queries++;
        byte[] answer = answer(java.util.Arrays.copyOf(packet.getData(), packet.getLength()));
        socket.send(new DatagramPacket(answer, answer.length, packet.getSocketAddress()));
      } catch (IOException | RuntimeException e) {
        // closed, or a datagram that is not a query: ignored
      }
    }
  }

  private byte[] answer(byte[] query) {
    int at = 12;
    StringBuilder name = new StringBuilder();
    while (query[at] != 0) {
      int length = query[at] & 0xff;
      if (name.length() > 0) {
        name.append('.');
      }
      name.append(new String(query, at + 1, length, StandardCharsets.US_ASCII));
      at += length + 1;
    }
    int questionEnd = at + 5;
    int type = ((query[at + 1] & 0xff) << 8) | (query[at + 2] & 0xff);
    List<String> values = txt.get(name.toString().toLowerCase(Locale.ROOT));
    boolean known = values != null;
    List<String> records = known && type == TXT ? values : List.of();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(query[0]);
    out.write(query[1]);
    out.write(0x84 | (query[2] & 0x01)); // response, authoritative, recursion desired as asked
    out.write(known ? 0x80 : 0x83); // recursion available; NXDOMAIN for an unknown name
    out.writeBytes(new byte[] {0, 1, 0, (byte) records.size(), 0, 0, 0, 0});
    out.write(query, 12, questionEnd - 12);
    for (String value : records) {
      byte[] text = value.getBytes(StandardCharsets.US_ASCII);
      out.writeBytes(new byte[] {(byte) 0xc0, 12, 0, TXT, 0, 1, 0, 0, 0, 60});
      out.write(0);
      out.write(text.length + 1);
      out.write(text.length);
      out.writeBytes(text);
    }
    return out.toByteArray();
  }

  @Override
  public void close() throws InterruptedException {
    socket.close();
    thread.join(2000);
  }
}
