package io.engram;

import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * What a server takes before it starts: its data directory (a lock file holding its process id)
 * and its port. A second server on the same directory or port stops at once with one plain
 * sentence naming the process that has it, instead of a log line about a locked index (and, worse,
 * a first server left answering a quickstart that meant to talk to the second).
 */
final class ServerClaim {
  /** Held for the life of the process: the lock goes when the process does, kill -9 included. */
  private static FileChannel held;

  private ServerClaim() {}

  /** Claims the data directory and checks the port; the reason it cannot, as one sentence. */
  static Optional<String> claim(Path dataDir, String host, int port) {
    Path lockFile = dataDir.resolve("engram.pid");
    try {
      Files.createDirectories(dataDir);
      FileChannel channel = FileChannel.open(
          lockFile, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
      FileLock lock = channel.tryLock();
      if (lock == null) {
        String owner = Files.readString(lockFile, StandardCharsets.UTF_8).strip();
        channel.close();
        return Optional.of("Engram cannot start: the data directory "
            + dataDir.toAbsolutePath().normalize() + " is in use by process "
            + (owner.isEmpty() ? "(unknown)" : owner)
            + " (another Engram server). Stop that one, or use it.");
      }
      channel.truncate(0);
      channel.write(ByteBuffer.wrap(
          Long.toString(ProcessHandle.current().pid()).getBytes(StandardCharsets.UTF_8)));
      channel.force(true);
      held = channel;
    } catch (IOException e) {
      return Optional.of("Engram cannot start: its data directory "
          + dataDir.toAbsolutePath().normalize() + " cannot be used (" + e.getMessage() + ").");
    }
    if (port == 0) {
      return Optional.empty();
    }
    try (ServerSocket probe = new ServerSocket()) {
      probe.setReuseAddress(true);
      probe.bind(new InetSocketAddress(host, port));
    } catch (BindException e) {
      return Optional.of("Engram cannot start: port " + port + " is in use by "
          + listener(port).map(pid -> "process " + pid).orElse("another process")
          + ". Stop it, or set API_PORT to another port.");
    } catch (IOException e) {
      return Optional.of("Engram cannot start: it cannot listen on " + host + ":" + port + " ("
          + e.getMessage() + ").");
    }
    return Optional.empty();
  }

  /** The process listening on the TCP port, from /proc (Linux); empty elsewhere or if unknown. */
  static Optional<Long> listener(int port) {
    String hexPort = String.format(":%04X ", port);
    Optional<String> inode = Stream.of("/proc/net/tcp", "/proc/net/tcp6")
        .map(Path::of)
        .filter(Files::isReadable)
        .flatMap(ServerClaim::lines)
        .map(String::trim)
        .map(line -> line.split("\\s+"))
        // local_address holds the port; state 0A is LISTEN; the inode is the tenth column.
        .filter(f -> f.length > 9 && (f[1] + " ").endsWith(hexPort) && f[3].equals("0A"))
        .map(f -> f[9])
        .findFirst();
    if (inode.isEmpty()) {
      return Optional.empty();
    }
    String socket = "socket:[" + inode.get() + "]";
    try (Stream<Path> processes = Files.list(Path.of("/proc"))) {
      return processes
          .filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit))
          .filter(p -> holds(p.resolve("fd"), socket))
          .map(p -> Long.parseLong(p.getFileName().toString()))
          .findFirst();
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
  }

  private static boolean holds(Path fds, String socket) {
    try (Stream<Path> links = Files.list(fds)) {
      return links.anyMatch(fd -> {
        try {
          return Files.readSymbolicLink(fd).toString().equals(socket);
        } catch (IOException e) {
          return false;
        }
      });
    } catch (IOException e) {
      return false;
    }
  }

  private static Stream<String> lines(Path file) {
    try {
      return Files.readAllLines(file).stream().skip(1);
    } catch (IOException e) {
      return Stream.empty();
    }
  }
}
