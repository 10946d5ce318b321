package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** A client of the memory routes for one token, at the organization level or inside one agent. */
record Memories(TestServer server, String token, String base) {

  /** A new organization's client, with a token that reads, writes and controls its memories. */
  static Memories ofNewOrganization(TestServer server) {
    String org = server.createOrganization("growth");
    return of(server, server.token(org, null, "memory:read", "memory:write", "memory:control"));
  }

  static Memories of(TestServer server, String token) {
    return new Memories(server, token, "/v1/memory");
  }

  Memories inAgent(String agent) {
    return new Memories(server, token, "/v1/memory/agents/" + agent);
  }

  Memories withToken(String other) {
    return new Memories(server, other, base);
  }

  Http.Response send(String method, String path, String json) {
    Http.Call call = server.http.method(method, base + path).bearer(token);
    return (json == null ? call : call.json(json)).send();
  }

  Http.Response encode(String json) {
    return send("POST", "", json);
  }

  /** Encodes and returns the new memory's id (asserting 201). */
  String remember(String text, Map<String, Object> fields) {
    Http.Response response = encode(text, fields);
    assertThat(response.status()).as(response.text()).isEqualTo(201);
    return response.json().get("id").asText();
  }

  private Http.Response encode(String text, Map<String, Object> fields) {
    Map<String, Object> body = new java.util.LinkedHashMap<>(fields);
    body.put("text", text);
    return encode(Json.write(body));
  }

  /**
   * Encodes and returns the memory's id: a new one (201) or the one that already said this,
   * reinforced (200).
   */
  String rememberOrReinforce(String text, Map<String, Object> fields) {
    Http.Response response = encode(text, fields);
    assertThat(response.status()).as(response.text()).isIn(200, 201);
    return response.json().get("id").asText();
  }

  String remember(String text) {
    return remember(text, Map.of());
  }

  Http.Response retrieve(String json) {
    return send("POST", "/retrieve", json);
  }

  /** The ids retrieval returns for the query, best first (asserting 200). */
  List<String> ids(String query, int limit) {
    Http.Response response = retrieve(Json.write(Map.of("query", query, "limit", limit)));
    assertThat(response.status()).as(response.text()).isEqualTo(200);
    List<String> ids = new ArrayList<>();
    response.json().get("memories").forEach(m -> ids.add(m.get("id").asText()));
    return ids;
  }

  Http.Response control(String memoryId, String verb, String json) {
    return send("POST", "/" + memoryId + "/" + verb, json);
  }

  Http.Response delete(String memoryId) {
    return send("DELETE", "/" + memoryId, null);
  }

  Http.Response get(String memoryId) {
    return send("GET", "/" + memoryId, null);
  }

  JsonNode provenance(String memoryId) {
    Http.Response response = send("GET", "/" + memoryId + "/provenance", null);
    assertThat(response.status()).as(response.text()).isEqualTo(200);
    return response.json();
  }
}
