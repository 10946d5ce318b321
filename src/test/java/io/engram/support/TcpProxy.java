package io.engram.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A TCP proxy in front of a real server (PostgreSQL), to take it away from the service under test
 * as a restart or an outage would: {@link #cut()} drops every open connection and refuses new ones
 * (nothing listens on the port), {@link #restore()} listens again on the same port.
 */
public final class TcpProxy implements AutoCloseable {
  private final InetSocketAddress target;
  private final int port;
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private volatile ServerSocket listener;

  public TcpProxy(String host, int targetPort) throws IOException {
    this.target = new InetSocketAddress(host, targetPort);
    this.listener = listen(0);
    this.port = listener.getLocalPort();
  }

  public int port() {
    return port;
  }

  /** Drops every connection and stops listening: new connections are refused. */
  public synchronized void cut() throws IOException {
    listener.close();
    for (Socket socket : open) {
      try {
        socket.setSoLinger(true, 0); // a reset, as a dead server's host answers
        socket.close();
      } catch (IOException ignored) {
        // already gone
      }
    }
    open.clear();
  }

  /** Listens again on the same port. */
  public synchronized void restore() throws IOException {
    listener = listen(port);
  }

  private ServerSocket listen(int on) throws IOException {
    ServerSocket socket = new ServerSocket();
    socket.setReuseAddress(true);
    socket.bind(new InetSocketAddress("127.0.0.1", on));
    Thread.ofVirtual().name("tcp-proxy-accept").start(() -> accept(socket));
    return socket;
  }

  private void accept(ServerSocket socket) {
    while (!socket.isClosed()) {
      try {
        Socket client = socket.accept();
        Socket server = new Socket();
        server.connect(target, 2000);
        open.add(client);
        open.add(server);
        pipe(client, server);
        pipe(server, client);
      } catch (IOException e) {
        // closed by cut(), or the target refused: the client sees its connection end
      }
    }
  }

  private void pipe(Socket from, Socket to) {
    Thread.ofVirtual().name("tcp-proxy-pipe").start(() -> {
      byte[] buffer = new byte[16 * 1024];
      try (InputStream in = from.getInputStream();
          OutputStream out = to.getOutputStream()) {
        int read;
        while ((read = in.read(buffer)) != -1) {
          out.write(buffer, 0, read);
          out.flush();
        }
      } catch (IOException e) {
        // one side went away
      } finally {
        closeQuietly(from);
        closeQuietly(to);
        open.remove(from);
        open.remove(to);
      }
    });
  }

  private static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException ignored) {
      // already closed
    }
  }

  @Override
  public void close() throws IOException {
    cut();
  }
}
