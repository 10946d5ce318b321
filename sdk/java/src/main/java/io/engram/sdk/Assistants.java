package io.engram.sdk;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Map;

/** Assistants and their capabilities (an API key of the organization, or a session). */
public final class Assistants {
  private final Engram client;

  Assistants(Engram client) {
    this.client = client;
  }

  public JsonNode create(String name, String type) {
    return client.request("POST", "/api/assistants", Map.of("name", name, "type", type))
        .path("assistant");
  }

  public JsonNode list() {
    return client.request("GET", "/api/assistants", null).path("assistants");
  }

  public JsonNode delete(String id) {
    return client.request("DELETE", "/api/assistants/" + id, null);
  }

  /** The capabilities in force and their version (what a change must name). */
  public JsonNode capabilities(String id) {
    return client.request("GET", "/api/assistants/" + id + "/capabilities", null);
  }

  /** Replaces the capabilities; with a version, only if nobody changed them since (else 412). */
  public JsonNode setCapabilities(
      String id, List<String> capabilities, Map<String, Object> configs, Long version) {
    Map<String, Object> body = configs == null
        ? Map.of("capabilities", capabilities)
        : Map.of("capabilities", capabilities, "capabilityConfigs", configs);
    return client.request(
        "PATCH",
        "/api/assistants/" + id + "/capabilities",
        body,
        Map.of(),
        version == null ? Map.of() : Map.of("If-Match", "\"" + version + "\""));
  }
}
