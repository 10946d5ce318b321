package io.engram.sdk;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Organizations, users and credentials (an account key; an admin API key for its own). */
public final class Admin {
  private final Engram client;

  Admin(Engram client) {
    this.client = client;
  }

  public JsonNode createOrganization(String name, String plan) {
    return client.request("POST", "/v1/organizations", Map.of("name", name, "plan", plan));
  }

  /** Every organization, page after page. */
  public List<JsonNode> organizations() {
    List<JsonNode> all = new ArrayList<>();
    String after = null;
    while (true) {
      Map<String, Object> query = new LinkedHashMap<>();
      query.put("after", after);
      JsonNode page = client.request("GET", "/v1/organizations", null, query, Map.of());
      page.path("data").forEach(all::add);
      if (!page.path("has_more").asBoolean() || page.path("data").isEmpty()) {
        return all;
      }
      after = all.get(all.size() - 1).path("id").asText();
    }
  }

  /** A context access token; its secret is in the answer's {@code token}, shown once. */
  public JsonNode createToken(String orgId, String name, List<String> scopes) {
    return client.request(
        "POST", "/v1/organizations/" + orgId + "/tokens", Map.of("name", name, "scopes", scopes));
  }

  public JsonNode tokens(String orgId) {
    return client.request("GET", "/v1/organizations/" + orgId + "/tokens", null).path("data");
  }

  public JsonNode revokeToken(String orgId, String id) {
    return client.request("DELETE", "/v1/organizations/" + orgId + "/tokens/" + id, null);
  }

  /** An API key (account key only); its secret is in the answer's {@code token}, shown once. */
  public JsonNode createApiKey(String orgId, String name, List<String> permissions) {
    return client.request(
        "POST",
        "/v1/organizations/" + orgId + "/api-keys",
        Map.of("name", name, "permissions", permissions));
  }
}
