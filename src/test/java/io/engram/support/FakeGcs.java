package io.engram.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.engram.platform.json.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A small stand-in for Cloud Storage's JSON API and Google's OAuth token endpoint, for what
 * cannot run here: no GCS emulator is published on npm or Maven Central, and Google's own
 * LocalStorageHelper is an in-process fake that would let no request cross HTTP. This one does:
 * the real Google client signs a JWT with the service account's key (checked here against the
 * public half), trades it for a token, and lists, uploads (multipart and resumable), reads (with
 * ranges) and deletes over HTTP, as it would against Google.
 */
public final class FakeGcs implements AutoCloseable {
  private static final Pattern OBJECT =
      Pattern.compile("^(?:/download)?/storage/v1/b/([^/]+)/o/(.+)$");
  private static final Pattern OBJECTS = Pattern.compile("^/storage/v1/b/([^/]+)/o/?$");
  private static final Pattern UPLOAD = Pattern.compile("^/upload/storage/v1/b/([^/]+)/o$");

  private record Stored(byte[] bytes, Map<String, String> metadata, Instant updated) {}

  private record Upload(
      String bucket, String name, Map<String, String> metadata, ByteArrayOutputStream received) {}

  private final HttpServer server;
  private final KeyPair key;
  private final Set<String> buckets;
  private final Map<String, Stored> objects = new ConcurrentHashMap<>();
  private final Map<String, Upload> uploads = new ConcurrentHashMap<>();
  private final Set<String> tokens = ConcurrentHashMap.newKeySet();

  public FakeGcs(Set<String> buckets) throws Exception {
    this.buckets = buckets;
    KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
    generator.initialize(2048);
    this.key = generator.generateKeyPair();
    this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", this::handle);
    server.start();
  }

  public String endpoint() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  /** A service-account key this fake accepts, base64 as the API takes it. */
  public String credentials(String email) {
    return credentials(email, key);
  }

  /** A well-formed key this fake refuses (signed by another key pair). */
  public String strangerCredentials(String email) throws Exception {
    KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
    generator.initialize(2048);
    return credentials(email, generator.generateKeyPair());
  }

  private String credentials(String email, KeyPair pair) {
    String pem = "-----BEGIN PRIVATE KEY-----\n"
        + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
            .encodeToString(pair.getPrivate().getEncoded())
        + "\n-----END PRIVATE KEY-----\n";
    Map<String, String> account = new LinkedHashMap<>();
    account.put("type", "service_account");
    account.put("project_id", "engram-test");
    account.put("private_key_id", "k1");
    account.put("private_key", pem);
    account.put("client_email", email);
    account.put("client_id", "1");
    account.put("token_uri", endpoint() + "/token");
    return Base64.getEncoder().encodeToString(Json.write(account).getBytes(StandardCharsets.UTF_8));
  }

  public byte[] object(String bucket, String name) {
    Stored stored = objects.get(bucket + "/" + name);
    return stored == null ? null : stored.bytes();
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      String path = exchange.getRequestURI().getRawPath();
      Map<String, String> query = query(exchange.getRequestURI().getRawQuery());
      byte[] body = exchange.getRequestBody().readAllBytes();
      if ("gzip".equals(exchange.getRequestHeaders().getFirst("Content-Encoding"))) {
        body = new java.util.zip.GZIPInputStream(new java.io.ByteArrayInputStream(body))
            .readAllBytes();
      }
      if (path.equals("/token")) {
        token(exchange, new String(body, StandardCharsets.UTF_8));
        return;
      }
      String authorization = exchange.getRequestHeaders().getFirst("Authorization");
      if (authorization == null || !tokens.contains(authorization.replace("Bearer ", ""))) {
        send(exchange, 401, error(401, "Invalid Credentials"));
        return;
      }
      Matcher m;
      if ((m = UPLOAD.matcher(path)).matches()) {
        upload(exchange, m.group(1), query, body);
      } else if ((m = OBJECTS.matcher(path)).matches()) {
        list(exchange, m.group(1), query);
      } else if ((m = OBJECT.matcher(path)).matches()) {
        if (path.startsWith("/download/")) {
          query.put("alt", "media");
        }
        object(exchange, m.group(1), URLDecoder.decode(m.group(2), StandardCharsets.UTF_8), query);
      } else {
        System.err.println("FakeGcs: no route " + exchange.getRequestMethod() + " " + path);
        send(exchange, 404, error(404, "Not Found"));
      }
    } catch (RuntimeException e) {
      System.err.println("FakeGcs: " + e);
      send(exchange, 500, error(500, e.toString()));
    }
  }

  private void token(HttpExchange exchange, String form) throws IOException {
    String assertion = query(form).get("assertion");
    String[] parts = assertion == null ? new String[0] : assertion.split("\\.");
    boolean valid = false;
    if (parts.length == 3) {
      try {
        Signature rsa = Signature.getInstance("SHA256withRSA");
        rsa.initVerify(key.getPublic());
        rsa.update((parts[0] + "." + parts[1]).getBytes(StandardCharsets.US_ASCII));
        valid = rsa.verify(Base64.getUrlDecoder().decode(parts[2]));
      } catch (Exception e) {
        valid = false;
      }
    }
    if (!valid) {
      send(
          exchange,
          400,
          "{\"error\":\"invalid_grant\",\"error_description\":\"Invalid JWT Signature.\"}");
      return;
    }
    String token = "ya29.fake-" + System.nanoTime();
    tokens.add(token);
    send(
        exchange,
        200,
        "{\"access_token\":\"" + token + "\",\"expires_in\":3600,\"token_type\":\"Bearer\"}");
  }

  private void upload(HttpExchange exchange, String bucket, Map<String, String> query, byte[] body)
      throws IOException {
    if (!buckets.contains(bucket)) {
      send(exchange, 404, error(404, "The specified bucket does not exist."));
      return;
    }
    String type = query.getOrDefault("uploadType", "");
    if (type.equals("multipart")) {
      String contentType = exchange.getRequestHeaders().getFirst("Content-Type");
      String boundary = "--"
          + contentType
              .substring(contentType.indexOf("boundary=") + 9)
              .replace("'", "")
              .replace("\"", "");
      String text = new String(body, StandardCharsets.ISO_8859_1);
      String[] parts = text.split(Pattern.quote(boundary));
      JsonNode metadata = Json.read(partBody(parts[1]), JsonNode.class);
      byte[] media = partBody(parts[2]).getBytes(StandardCharsets.ISO_8859_1);
      Stored stored = store(bucket, metadata.get("name").asText(), metadata, media);
      send(exchange, 200, resource(bucket, metadata.get("name").asText(), stored));
    } else if (type.equals("resumable") && query.containsKey("upload_id")) {
      Upload upload = uploads.get(query.get("upload_id"));
      String range = exchange.getRequestHeaders().getFirst("Content-Range");
      upload.received().write(body);
      Matcher total = Pattern.compile("/(\\d+|\\*)$").matcher(range == null ? "" : range);
      boolean last = total.find()
          && !total.group(1).equals("*")
          && Long.parseLong(total.group(1)) == upload.received().size();
      if (last) {
        uploads.remove(query.get("upload_id"));
        ObjectNode metadata = Json.MAPPER.createObjectNode();
        metadata.set("metadata", Json.MAPPER.valueToTree(upload.metadata()));
        Stored stored = store(bucket, upload.name(), metadata, upload.received().toByteArray());
        send(exchange, 200, resource(bucket, upload.name(), stored));
      } else {
        if (upload.received().size() > 0) {
          exchange
              .getResponseHeaders()
              .set("Range", "bytes=0-" + (upload.received().size() - 1));
        }
        exchange.sendResponseHeaders(308, -1);
      }
    } else if (type.equals("resumable")) {
      JsonNode metadata = Json.read(new String(body, StandardCharsets.UTF_8), JsonNode.class);
      String id = "u" + System.nanoTime();
      Map<String, String> kept = new TreeMap<>();
      metadata
          .path("metadata")
          .fields()
          .forEachRemaining(f -> kept.put(f.getKey(), f.getValue().asText()));
      uploads.put(
          id, new Upload(bucket, metadata.get("name").asText(), kept, new ByteArrayOutputStream()));
      exchange
          .getResponseHeaders()
          .set(
              "Location",
              endpoint() + "/upload/storage/v1/b/" + bucket + "/o?uploadType=resumable&upload_id="
                  + id);
      send(exchange, 200, "");
    } else {
      send(exchange, 400, error(400, "unsupported uploadType " + type));
    }
  }

  private static String partBody(String part) {
    int start = part.indexOf("\r\n\r\n");
    String bodyPart = part.substring(start + 4);
    return bodyPart.endsWith("\r\n") ? bodyPart.substring(0, bodyPart.length() - 2) : bodyPart;
  }

  private Stored store(String bucket, String name, JsonNode metadata, byte[] bytes) {
    Map<String, String> kept = new TreeMap<>();
    metadata
        .path("metadata")
        .fields()
        .forEachRemaining(f -> kept.put(f.getKey(), f.getValue().asText()));
    Stored stored = new Stored(bytes, kept, Instant.now());
    objects.put(bucket + "/" + name, stored);
    return stored;
  }

  private void list(HttpExchange exchange, String bucket, Map<String, String> query)
      throws IOException {
    if (!buckets.contains(bucket)) {
      send(exchange, 404, error(404, "The specified bucket does not exist."));
      return;
    }
    String prefix = query.getOrDefault("prefix", "");
    StringBuilder items = new StringBuilder();
    new TreeMap<>(objects).forEach((id, stored) -> {
      String name = id.substring(bucket.length() + 1);
      if (id.startsWith(bucket + "/") && name.startsWith(prefix)) {
        items.append(items.isEmpty() ? "" : ",").append(resource(bucket, name, stored));
      }
    });
    send(exchange, 200, "{\"kind\":\"storage#objects\",\"items\":[" + items + "]}");
  }

  private void object(HttpExchange exchange, String bucket, String name, Map<String, String> query)
      throws IOException {
    Stored stored = objects.get(bucket + "/" + name);
    if (exchange.getRequestMethod().equals("DELETE")) {
      send(
          exchange,
          stored == null ? 404 : 204,
          stored == null ? error(404, "No such object") : null);
      objects.remove(bucket + "/" + name);
      return;
    }
    if (stored == null || !buckets.contains(bucket)) {
      send(exchange, 404, error(404, "No such object: " + bucket + "/" + name));
      return;
    }
    if (!"media".equals(query.get("alt"))) {
      send(exchange, 200, resource(bucket, name, stored));
      return;
    }
    String range = exchange.getRequestHeaders().getFirst("Range");
    byte[] bytes = stored.bytes();
    int from = 0;
    int to = bytes.length - 1;
    if (range != null) {
      Matcher m = Pattern.compile("bytes=(\\d+)-(\\d*)").matcher(range);
      if (m.find()) {
        from = Integer.parseInt(m.group(1));
        if (!m.group(2).isEmpty()) {
          to = Math.min(to, Integer.parseInt(m.group(2)));
        }
      }
    }
    exchange.getResponseHeaders().set("x-goog-generation", "1");
    exchange.getResponseHeaders().set("Content-Type", "application/octet-stream");
    byte[] slice = from > to ? new byte[0] : Arrays.copyOfRange(bytes, from, to + 1);
    if (range != null) {
      exchange
          .getResponseHeaders()
          .set("Content-Range", "bytes " + from + "-" + to + "/" + bytes.length);
    }
    exchange.sendResponseHeaders(range == null ? 200 : 206, slice.length == 0 ? -1 : slice.length);
    exchange.getResponseBody().write(slice);
  }

  private static String resource(String bucket, String name, Stored stored) {
    Map<String, Object> resource = new LinkedHashMap<>();
    resource.put("kind", "storage#object");
    resource.put("id", bucket + "/" + name + "/1");
    resource.put("name", name);
    resource.put("bucket", bucket);
    resource.put("generation", "1");
    resource.put("metageneration", "1");
    resource.put("size", String.valueOf(stored.bytes().length));
    resource.put("updated", stored.updated().toString());
    resource.put("timeCreated", stored.updated().toString());
    resource.put("metadata", stored.metadata());
    return Json.write(resource);
  }

  private static String error(int code, String message) {
    return "{\"error\":{\"code\":" + code + ",\"message\":" + Json.write(message)
        + ",\"errors\":[{\"message\":" + Json.write(message) + ",\"reason\":\"x\"}]}}";
  }

  private static Map<String, String> query(String raw) {
    Map<String, String> query = new LinkedHashMap<>();
    if (raw != null) {
      for (String pair : raw.split("&")) {
        int eq = pair.indexOf('=');
        if (eq > 0) {
          query.put(
              URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
              URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
        }
      }
    }
    return query;
  }

  private static void send(HttpExchange exchange, int status, String body) throws IOException {
    byte[] bytes = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "application/json; charset=UTF-8");
    exchange.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
    if (bytes.length > 0) {
      exchange.getResponseBody().write(bytes);
    }
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
