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

  /** A file as served; {@code immutable} ones are named by version and cached for good. */
  record File(byte[] body, byte[] gzipped, String type, String etag, boolean immutable) {}

  private final Map<String, File> files = new LinkedHashMap<>();
  private final String version;

  /**
   * Scripts, styles and the chart library are served twice: at their plain path (revalidated on
   * every use) and under {@code /console/<version>/}, where the version is a digest of them all,
   * cached for good. The pages name the versioned paths, and the modules import each other by
   * relative paths, so a page load after the first asks the server for its HTML and its data
   * only, and an upgrade changes the version, so nothing stale is ever used.
   */
  ConsoleFiles(ClassLoader loader) {
    Map<String, String> shipped = new LinkedHashMap<>();
    for (String asset : assets(loader)) {
      shipped.put("assets/" + asset, "console/assets/" + asset);
    }
    shipped.put("vendor/uplot.js", UPLOT + "uPlot.iife.min.js");
    shipped.put("vendor/uplot.css", UPLOT + "uPlot.min.css");
    Map<String, byte[]> bodies = new LinkedHashMap<>();
    shipped.forEach((path, resource) -> bodies.put(path, read(loader, resource)));
    this.version = digest(bodies.values());
    bodies.forEach((path, body) -> {
      String type = type(shipped.get(path));
      files.put("/console/" + path, file(body, type, false));
      files.put("/console/" + version + "/" + path, file(body, type, true));
    });
    page("/", read(loader, "console/signin.html"));
    page("/console/app", read(loader, "console/app.html"));
  }

  /** A page shell, pointing at this version's files. */
  private void page(String path, byte[] html) {
    String text = new String(html, StandardCharsets.UTF_8)
        .replace("\"/console/assets/", "\"/console/" + version + "/assets/")
        .replace("\"/console/vendor/", "\"/console/" + version + "/vendor/");
    files.put(path, file(text.getBytes(StandardCharsets.UTF_8), type(".html"), false));
  }

  String version() {
    return version;
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
        .filter(f -> f.type().startsWith("text/javascript") && !f.immutable()) // each once
        .mapToLong(f -> f.gzipped().length)
        .sum();
  }

  private static File file(byte[] body, String type, boolean immutable) {
    return new File(body, gzip(body), type, etag(body), immutable);
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
    return "\"" + digest(List.of(body)) + "\"";
  }

  /** The first 12 bytes of the SHA-256 of the bodies one after another, in hex. */
  private static String digest(java.util.Collection<byte[]> bodies) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      bodies.forEach(sha::update);
      return HexFormat.of().formatHex(sha.digest(), 0, 12);
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
