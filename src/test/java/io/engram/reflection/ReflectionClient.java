package io.engram.reflection;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One organization seen through the routes: a memory token to write and control memories, an
 * admin API key for the reflection routes, and helpers that start a run and wait for its audit.
 */
record ReflectionClient(TestServer server, String org, String token, String adminKey) {
  static final String BASE = "/api/memory/reflection";

  static ReflectionClient create(TestServer server, String plan) {
    String org = server.createOrganization(plan);
    return new ReflectionClient(
        server,
        org,
        server.token(org, null, "memory:read", "memory:write", "memory:control", "memory:delete"),
        server.apiKey(org, 100_000, "admin"));
  }

  /** Encodes a memory (with optional subject, kind, confidence, occurredAt) and returns its id. */
  String remember(String text, String subject, Object... more) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("text", text);
    if (subject != null) {
      body.put("subject", subject);
    }
    for (int i = 0; i < more.length; i += 2) {
      body.put((String) more[i], more[i + 1]);
    }
    Http.Response response =
        server.http.post("/v1/memory").bearer(token).json(Json.write(body)).send();
    assertThat(response.status()).as(response.text()).isEqualTo(201);
    return response.json().get("id").asText();
  }

  Http.Response control(String memoryId, String verb) {
    return server
        .http
        .post("/v1/memory/" + memoryId + "/" + verb)
        .bearer(token)
        .json("{}")
        .send();
  }

  JsonNode memory(String memoryId) {
    Http.Response response =
        server.http.get("/v1/memory/" + memoryId).bearer(token).send();
    assertThat(response.status()).as(response.text()).isEqualTo(200);
    return response.json();
  }

  String state(String memoryId) {
    return memory(memoryId).get("state").asText();
  }

  JsonNode provenance(String memoryId) {
    Http.Response response =
        server.http.get("/v1/memory/" + memoryId + "/provenance").bearer(token).send();
    assertThat(response.status()).as(response.text()).isEqualTo(200);
    return response.json();
  }

  List<String> retrieve(String query) {
    return retrieve(query, null);
  }

  /** The memory ids a retrieval returns, as of {@code asOf} (null: now). */
  List<String> retrieve(String query, String asOf) {
    Map<String, Object> body =
        new LinkedHashMap<>(Map.of("query", query, "limit", 20, "recordUse", false));
    if (asOf != null) {
      body.put("asOf", asOf);
    }
    Http.Response response = server
        .http
        .post("/v1/memory/retrieve")
        .bearer(token)
        .json(Json.write(body))
        .send();
    assertThat(response.status()).as(response.text()).isEqualTo(200);
    List<String> ids = new ArrayList<>();
    response.json().get("memories").forEach(m -> ids.add(m.get("id").asText()));
    return ids;
  }

  /** Erases what {@code body} selects (POST /v1/memory/erase); the erasure once completed. */
  JsonNode erase(String body) {
    Http.Response started =
        server.http.post("/v1/memory/erase").bearer(token).json(body).send();
    assertThat(started.status()).as(started.text()).isEqualTo(202);
    for (int i = 0; i < 100; i++) {
      JsonNode seen =
          server.http.get(started.header("Location")).bearer(token).send().json();
      if (seen.get("status").asText().equals("completed")) {
        return seen;
      }
      io.engram.support.ServerProcess.sleep(100);
    }
    throw new AssertionError("the erasure did not complete");
  }

  Http.Response get(String path) {
    return server.http.get(BASE + path).bearer(adminKey).send();
  }

  Http.Response post(String path, String json) {
    return server.http.post(BASE + path).bearer(adminKey).json(json).send();
  }

  Http.Response patchSettings(String json) {
    return server.http.patch(BASE + "/settings").bearer(adminKey).json(json).send();
  }

  /** Starts a run and waits for it to finish; returns its audit. */
  JsonNode run(boolean dryRun) {
    Http.Response started = post("/run", "{\"dryRun\":" + dryRun + "}");
    assertThat(started.status()).as(started.text()).isEqualTo(202);
    return awaitAudit(started.json().get("runId").asText());
  }

  JsonNode awaitAudit(String runId) {
    long deadline = System.nanoTime() + 60_000_000_000L;
    while (true) {
      Http.Response audit = get("/audits/" + runId);
      assertThat(audit.status()).as(audit.text()).isEqualTo(200);
      JsonNode body = audit.json().get("audit");
      if (!body.get("status").asText().equals("running")) {
        assertThat(body.get("status").asText()).as(body.toString()).isEqualTo("completed");
        return body;
      }
      assertThat(System.nanoTime()).as("run " + runId + " still running").isLessThan(deadline);
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
    }
  }

  /** A run's events, all pages. */
  List<JsonNode> events(String query) {
    List<JsonNode> events = new ArrayList<>();
    String cursor = null;
    do {
      Http.Response page =
          get("/events?limit=2&" + query + (cursor == null ? "" : "&cursor=" + cursor));
      assertThat(page.status()).as(page.text()).isEqualTo(200);
      page.json().get("events").forEach(events::add);
      cursor = page.json().get("nextCursor").isNull()
          ? null
          : page.json().get("nextCursor").asText();
    } while (cursor != null);
    return events;
  }

  List<JsonNode> changes(JsonNode audit, String change) {
    return events("run=" + audit.get("id").asText() + "&change=" + change);
  }

  Http.Response undoRun(String runId) {
    return post("/undo", "{\"runId\":\"" + runId + "\",\"reason\":\"test\"}");
  }

  Http.Response undoEvent(String eventId) {
    return post("/undo", "{\"eventId\":\"" + eventId + "\"}");
  }

  static String daysAgo(TestServer server, int days) {
    return Instant.ofEpochMilli(server.clock.millis())
        .minusSeconds(days * 86_400L)
        .toString();
  }
}
