package io.engram.support;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A real SolrCloud cluster for the tests: a ZooKeeper and {@code n} Solr nodes, each a process of
 * its own (emulators/solr, built by {@code ./engram test} from Maven Central's Solr artifacts), so
 * a node can be killed with -9 and started again on its data. Without the build the tests that
 * need it are skipped, except in CI, where they fail.
 */
public final class SolrCluster implements AutoCloseable {
  private static final Path CLASSPATH = Path.of("emulators/solr/target/classpath.txt");
  private static final Path CLASSES = Path.of("emulators/solr/target/classes");

  private final Path home;
  private final String zkHost;
  private final Process zk;
  private final List<Process> nodes = new ArrayList<>();
  private final List<Integer> ports = new ArrayList<>();

  private SolrCluster(int size) throws IOException {
    home = Files.createTempDirectory("engram-solr");
    int zkPort = ServerProcess.freePort();
    zk = launch("zk", List.of("zk", home.resolve("zk").toString(), Integer.toString(zkPort)));
    awaitReady(zk, "zk", 0);
    zkHost = "127.0.0.1:" + zkPort + "/solr";
    for (int i = 0; i < size; i++) {
      ports.add(ServerProcess.freePort());
      nodes.add(null);
    }
    // Started together: each node takes a few seconds, mostly its JVM warming up.
    List<Process> starting = new ArrayList<>();
    for (int i = 0; i < size; i++) {
      starting.add(spawn(i));
    }
    for (int i = 0; i < size; i++) {
      nodes.set(i, starting.get(i));
      awaitReady(starting.get(i), "node-" + i, 0);
    }
  }

  /** Starts a cluster of {@code size} Solr nodes, or skips the test where Solr was not built. */
  public static SolrCluster start(int size) {
    boolean built = Files.exists(CLASSPATH);
    if (!built && "true".equals(System.getenv("CI"))) {
      throw new IllegalStateException(
          "emulators/solr is not built (" + CLASSPATH + "): run the suite with ./engram test");
    }
    assumeTrue(built, "Solr is not built here (emulators/solr): run ./engram test to build it");
    try {
      return new SolrCluster(size);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The nodes' base URLs, as ENGRAM_SOLR_URL takes them. */
  public String urls() {
    return ports.stream()
        .map(port -> "http://127.0.0.1:" + port + "/solr")
        .collect(Collectors.joining(","));
  }

  public String url(int node) {
    return "http://127.0.0.1:" + ports.get(node) + "/solr";
  }

  /** Kills a node at once (-9): no shutdown, as a machine that died. */
  public void kill(int node) {
    Process process = nodes.get(node);
    process.destroyForcibly();
    try {
      process.waitFor();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Starts a killed node again, on its data and port. */
  public void restart(int node) {
    int before = readies("node-" + node);
    Process process = spawn(node);
    nodes.set(node, process);
    awaitReady(process, "node-" + node, before);
  }

  private Process spawn(int node) {
    return launch(
        "node-" + node,
        List.of(
            "node",
            home.resolve("node-" + node).toString(),
            Integer.toString(ports.get(node)),
            zkHost));
  }

  private Process launch(String name, List<String> args) {
    String javaBinary = System.getenv().getOrDefault("ENGRAM_SOLR_JAVA", java17());
    List<String> command = new ArrayList<>(List.of(
        javaBinary,
        "-Xmx384m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-cp",
        CLASSES.toAbsolutePath() + java.io.File.pathSeparator + read(CLASSPATH),
        "io.engram.emulators.SolrNode"));
    command.addAll(args);
    try {
      Path log = home.resolve(name + ".log");
      return new ProcessBuilder(command)
          .redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
          .start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** How many times the process's log said it was ready (its restarts append to one log). */
  private int readies(String name) {
    Path log = home.resolve(name + ".log");
    return Files.exists(log) ? read(log).split("(?m)^ready ", -1).length - 1 : 0;
  }

  /** Solr 9 is built and supported on Java 17: that one when the machine has it. */
  private static String java17() {
    for (String home :
        List.of("/usr/lib/jvm/java-17-openjdk-amd64", "/usr/lib/jvm/temurin-17-jdk-amd64")) {
      if (Files.isExecutable(Path.of(home, "bin", "java"))) {
        return home + "/bin/java";
      }
    }
    return "java";
  }

  private void awaitReady(Process process, String name, int before) {
    Path log = home.resolve(name + ".log");
    long deadline = System.nanoTime() + 120_000_000_000L;
    while (System.nanoTime() < deadline) {
      if (readies(name) > before) {
        return;
      }
      if (!process.isAlive()) {
        throw new IllegalStateException("Solr " + name + " stopped: " + tail(log));
      }
      ServerProcess.sleep(200);
    }
    throw new IllegalStateException("Solr " + name + " did not start in 120 s: " + tail(log));
  }

  private static String read(Path file) {
    try {
      return Files.readString(file).strip();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String tail(Path log) {
    String text = Files.exists(log) ? read(log) : "(no log)";
    return text.substring(Math.max(0, text.length() - 2_000));
  }

  @Override
  public void close() {
    nodes.forEach(node -> {
      if (node != null) {
        node.destroyForcibly();
      }
    });
    zk.destroyForcibly();
  }
}
