package io.engram.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.engram.platform.json.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A fake of OpenAI's fine-tuning API for the upstream trainer: files are received (their bytes
 * kept), a job walks validating_files, queued, running (a metrics event per look) and succeeded
 * after a few looks, or stops when cancelled; models can be deleted.
 */
public final class FakeFineTuningApi {
  /** A job as the fake keeps it. */
  public static final class Job {
    final ObjectNode body;
    final ArrayNode events = Json.MAPPER.createArrayNode();
    int looks;
    volatile boolean cancelled;

    public boolean cancelled() {
      return cancelled;
    }

    Job(ObjectNode body) {
      this.body = body;
    }
  }

  private final Map<String, byte[]> files = new ConcurrentHashMap<>();
  private final Map<String, Job> jobs = new ConcurrentHashMap<>();
  private final List<String> deletedModels = new CopyOnWriteArrayList<>();
  private final AtomicInteger ids = new AtomicInteger();
  private volatile int looksToFinish = 4;

  private FakeFineTuningApi() {}

  static FakeFineTuningApi on(HttpServer server) {
    FakeFineTuningApi api = new FakeFineTuningApi();
    server.createContext("/v1/files", api::files);
    server.createContext("/v1/fine_tuning/jobs", api::jobs);
    server.createContext("/v1/models/", api::models);
    return api;
  }

  /** How many looks at a job it takes to finish (a large number keeps it running). */
  public void looksToFinish(int looks) {
    looksToFinish = looks;
  }

  public Map<String, byte[]> files() {
    return files;
  }

  public Map<String, Job> jobs() {
    return jobs;
  }

  public JsonNode request(String jobId) {
    return jobs.get(jobId).body.get("request");
  }

  public List<String> deletedModels() {
    return deletedModels;
  }

  private void files(HttpExchange exchange) throws IOException {
    byte[] body = exchange.getRequestBody().readAllBytes();
    String text = new String(body, StandardCharsets.UTF_8);
    String id = "file-up" + ids.incrementAndGet();
    int start = text.indexOf("\r\n\r\n", text.indexOf("name=\"file\"")) + 4;
    int end = text.lastIndexOf("\r\n--");
    files.put(id, text.substring(start, end).getBytes(StandardCharsets.UTF_8));
    send(
        exchange,
        200,
        Json.MAPPER
            .createObjectNode()
            .put("id", id)
            .put("object", "file")
            .put("purpose", text.contains("fine-tune") ? "fine-tune" : "?"));
  }

  private void jobs(HttpExchange exchange) throws IOException {
    String path = exchange.getRequestURI().getPath().substring("/v1/fine_tuning/jobs".length());
    if (path.isEmpty() && exchange.getRequestMethod().equals("POST")) {
      JsonNode request = Json.MAPPER.readTree(exchange.getRequestBody());
      if (!files.containsKey(request.path("training_file").asText())) {
        send(exchange, 400, error("invalid_training_file", "no such file"));
        return;
      }
      String id = "ftjob-up" + ids.incrementAndGet();
      ObjectNode body = Json.MAPPER
          .createObjectNode()
          .put("object", "fine_tuning.job")
          .put("id", id)
          .put("model", request.path("model").asText())
          .put("status", "validating_files");
      body.set("request", request);
      jobs.put(id, new Job(body));
      send(exchange, 200, body);
      return;
    }
    String[] parts = path.substring(1).split("/");
    Job job = jobs.get(parts[0]);
    if (job == null) {
      send(exchange, 404, error("not_found", "no such job"));
      return;
    }
    synchronized (job) {
      if (parts.length == 2 && parts[1].equals("cancel")) {
        job.cancelled = true;
        job.body.put("status", "cancelled");
        send(exchange, 200, job.body);
      } else if (parts.length == 2 && parts[1].equals("events")) {
        ObjectNode list = Json.MAPPER.createObjectNode().put("object", "list");
        ArrayNode data = list.putArray("data");
        for (int i = job.events.size() - 1; i >= 0; i--) {
          data.add(job.events.get(i));
        }
        list.put("has_more", false);
        send(exchange, 200, list);
      } else {
        advance(job);
        send(exchange, 200, job.body);
      }
    }
  }

  private void advance(Job job) {
    if (job.cancelled) {
      return;
    }
    job.looks++;
    String id = job.body.get("id").asText();
    switch (job.looks) {
      case 1 -> job.body.put("status", "queued");
      case 2 -> job.body.put("status", "running");
      default -> {
        if (job.looks >= looksToFinish) {
          job.body.put("status", "succeeded");
          job.body.put("fine_tuned_model", "ft:" + job.body.get("model").asText() + ":fake::" + id);
          job.body.put("trained_tokens", 1234);
          event(job, "message", "The job has successfully completed", null);
          return;
        }
      }
    }
    ObjectNode data =
        Json.MAPPER.createObjectNode().put("step", job.looks).put("train_loss", 2.0 / job.looks);
    event(job, "metrics", "Step " + job.looks, data);
  }

  private void event(Job job, String type, String message, ObjectNode data) {
    ObjectNode event = job.events
        .addObject()
        .put("object", "fine_tuning.job.event")
        .put("id", "ftevent-up" + ids.incrementAndGet())
        .put("created_at", 1)
        .put("level", "info")
        .put("message", message)
        .put("type", type);
    if (data != null) {
      event.set("data", data);
    }
  }

  private void models(HttpExchange exchange) throws IOException {
    String model = java.net.URLDecoder.decode(
        exchange.getRequestURI().getRawPath().substring("/v1/models/".length()),
        StandardCharsets.UTF_8);
    deletedModels.add(model);
    send(exchange, 200, Json.MAPPER.createObjectNode().put("id", model).put("deleted", true));
  }

  private static ObjectNode error(String code, String message) {
    ObjectNode body = Json.MAPPER.createObjectNode();
    body.putObject("error").put("code", code).put("message", message);
    return body;
  }

  private static void send(HttpExchange exchange, int status, JsonNode body) throws IOException {
    byte[] bytes = Json.write(body).getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    exchange.sendResponseHeaders(status, bytes.length);
    exchange.getResponseBody().write(bytes);
    exchange.close();
  }
}
