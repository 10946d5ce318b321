package io.engram.console;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.zip.GZIPOutputStream;

/**
 * The console's files, read from the classpath once at start: its pages, scripts and styles
 * ({@code console/}), and the chart library from its WebJar. Each is kept with its gzip form and
 * an ETag, so a page costs a map lookup. The list is fixed: a path not in it is not served, so
 * nothing outside the console's own directory can be reached by a crafted name.
 */
final class ConsoleFiles {
  /** The WebJar's uPlot, served under the console's vendor path (its licence: MIT). */
  static final String UPLOT = "META-INF/resources/webjars/uplot/1.6.30/dist/";

  record File(byte[] body, byte[] gzipped, String type, String etag) {}

  private final Map<String, File> files = new LinkedHashMap<>();

  ConsoleFiles(ClassLoader loader) {
    add(loader, "/", "console/signin.html");
    add(loader, "/console/app", "console/app.html");
    for (String asset : assets(loader)) {
      add(loader, "/console/assets/" + asset, "console/assets/" + asset);
    }
    add(loader, "/console/vendor/uplot.js", UPLOT + "uPlot.iife.min.js");
    add(loader, "/console/vendor/uplot.css", UPLOT + "uPlot.min.css");
  }

  /** The manifest {@code console/assets.txt}: one file of console/assets/ per line. */
  private static List<String> assets(ClassLoader loader) {
    String manifest = new String(read(loader, "console/assets.txt"), StandardCharsets.UTF_8);
    return manifest
        .lines()
        .map(String::strip)
        .filter(l -> !l.isEmpty() && !l.startsWith("#"))
        .toList();
  }

  Optional<File> get(String path) {
    return Optional.ofNullable(files.get(path));
  }

  /** Bytes of every script the console ships, gzipped (its budget: 150 kB). */
  long scriptBytesGzipped() {
    return files.values().stream()
        .filter(f -> f.type().startsWith("text/javascript"))
        .mapToLong(f -> f.gzipped().length)
        .sum();
  }

  private void add(ClassLoader loader, String path, String resource) {
    byte[] body = read(loader, resource);
    files.put(path, new File(body, gzip(body), type(resource), etag(body)));
  }

  private static byte[] read(ClassLoader loader, String resource) {
    try (InputStream in = loader.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("The console's file " + resource + " is missing");
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static byte[] gzip(byte[] body) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(body.length / 3 + 64);
    try (GZIPOutputStream zip = new GZIPOutputStream(out)) {
      zip.write(body);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  private static String etag(byte[] body) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(body);
      return "\"" + HexFormat.of().formatHex(digest, 0, 12) + "\"";
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String type(String resource) {
    if (resource.endsWith(".html")) {
      return "text/html; charset=utf-8";
    }
    if (resource.endsWith(".js")) {
      return "text/javascript; charset=utf-8";
    }
    if (resource.endsWith(".css")) {
      return "text/css; charset=utf-8";
    }
    if (resource.endsWith(".svg")) {
      return "image/svg+xml";
    }
    throw new IllegalStateException("No content type known for " + resource);
  }
}
