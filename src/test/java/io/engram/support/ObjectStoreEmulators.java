package io.engram.support;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The local object-store emulators the official SDKs run against in the tests: s3rver (S3) and
 * Azurite (Azure Blob), from npm ({@code emulators/}), each started once per test JVM on a free
 * port with its data in a temporary folder, and stopped when the JVM ends. Without Node.js the
 * tests that need them are skipped, except in CI, where they fail.
 */
public final class ObjectStoreEmulators {
  public static final String S3_ACCESS_KEY = "S3RVER";
  public static final String S3_SECRET = "S3RVER";
  /** Buckets s3rver has from its start. */
  public static final List<String> S3_BUCKETS =
      List.of("engram-test", "engram-retention", "engram-bench");
  /** Azurite's well-known development account and key (public, documented by Microsoft). */
  public static final String AZURE_ACCOUNT = "devstoreaccount1";

  public static final String AZURE_KEY =
      "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

  private static final Path DIRECTORY = Path.of("emulators");
  private static String s3;
  private static String azure;

  private ObjectStoreEmulators() {}

  /** The S3 endpoint (path-style), s3rver started on first use. */
  public static synchronized String s3() {
    if (s3 == null) {
      List<String> command = new ArrayList<>(
          List.of("node_modules/.bin/s3rver", "-d", temp("s3rver"), "-a", "127.0.0.1", "-p", "0"));
      S3_BUCKETS.forEach(bucket -> command.addAll(List.of("--configure-bucket", bucket)));
      s3 = "http://127.0.0.1:"
          + start(command, Pattern.compile("listening on 127\\.0\\.0\\.1:(\\d+)"));
    }
    return s3;
  }

  /** The Azure Blob endpoint with {@code {account}} for the account, Azurite started on first use. */
  public static synchronized String azure() {
    if (azure == null) {
      azure = "http://127.0.0.1:"
          + start(
              List.of(
                  "node_modules/.bin/azurite-blob",
                  "--blobHost",
                  "127.0.0.1",
                  "--blobPort",
                  "0",
                  "-l",
                  temp("azurite"),
                  "--skipApiVersionCheck",
                  "--loose",
                  "--disableTelemetry"),
              Pattern.compile("listens on http://127\\.0\\.0\\.1:(\\d+)"))
          + "/{account}";
    }
    return azure;
  }

  private static String temp(String name) {
    try {
      return Files.createTempDirectory("engram-" + name).toString();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static int start(List<String> command, Pattern ready) {
    try {
      NodeSuite.requireNode();
      if (!Files.isDirectory(DIRECTORY.resolve("node_modules"))) {
        NodeSuite.npm(DIRECTORY, "ci", "--no-audit", "--no-fund");
      }
      Process process = new ProcessBuilder(command)
          .directory(DIRECTORY.toFile())
          .redirectErrorStream(true)
          .start();
      Runtime.getRuntime().addShutdownHook(new Thread(process::destroyForcibly));
      BufferedReader out = new BufferedReader(
          new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
      StringBuilder seen = new StringBuilder();
      CompletableFuture<Integer> port = CompletableFuture.supplyAsync(() -> {
        try {
          String line;
          while ((line = out.readLine()) != null) {
            seen.append(line).append('\n');
            Matcher m = ready.matcher(line);
            if (m.find()) {
              int found = Integer.parseInt(m.group(1));
              // Keep reading so the emulator never blocks on a full pipe.
              Thread.ofPlatform().daemon(true).start(() -> drain(out));
              return found;
            }
          }
          throw new IllegalStateException("exited before listening:\n" + seen);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
      return port.get(60, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } catch (Exception e) {
      throw new IllegalStateException("could not start " + command.get(0) + ": " + e, e);
    }
  }

  private static void drain(BufferedReader out) {
    try {
      String line;
      while ((line = out.readLine()) != null) {
        if (System.getenv("ENGRAM_EMULATOR_LOG") != null) {
          System.err.println("[emulator] " + line);
        }
      }
    } catch (IOException ignored) {
      // the emulator ended
    }
  }
}
