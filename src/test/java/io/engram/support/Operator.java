package io.engram.support;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import java.util.List;

/**
 * The operator's calls a test makes to set itself up over HTTP, with the account-level key:
 * organizations, API keys, context access tokens. Used against an in-process server ({@link
 * TestServer}) and against separate processes alike.
 */
public final class Operator {
  private final Http http;
  private final String accountKey;

  public Operator(Http http, String accountKey) {
    this.http = http;
    this.accountKey = accountKey;
  }

  public Http.Response send(Http.Call call) {
    return call.bearer(accountKey).send();
  }

  public String createOrganization(String plan) {
    Http.Response response = send(http.post("/v1/organizations")
        .json("{\"name\":\"Org " + plan + "\",\"plan\":\"" + plan + "\"}"));
    assertThat(response.status()).as(response.text()).isEqualTo(201);
    return response.json().get("id").asText();
  }

  /** Creates an API key: its id and its secret ({@code token}). */
  public JsonNode createApiKey(String orgId, int rateLimit, String... permissions) {
    String body = "{\"name\":\"key\",\"permissions\":" + Json.write(permissions)
        + ",\"rate_limit\":" + rateLimit + "}";
    return created(send(http.post("/v1/organizations/" + orgId + "/api-keys").json(body)));
  }

  /** Creates a context access token and returns its secret. */
  public String token(String orgId, List<String> agents, String... scopes) {
    String body = "{\"name\":\"token\",\"scopes\":" + Json.write(scopes)
        + (agents == null ? "" : ",\"agents\":" + Json.write(agents)) + "}";
    return created(send(http.post("/v1/organizations/" + orgId + "/tokens").json(body)))
        .get("token")
        .asText();
  }

  /** Creates a context access token bound to one end user and returns its secret. */
  public String endUserToken(String orgId, String endUser, String... scopes) {
    String body = "{\"name\":\"user token\",\"scopes\":" + Json.write(scopes) + ",\"end_user_id\":"
        + Json.write(endUser) + "}";
    return created(send(http.post("/v1/organizations/" + orgId + "/tokens").json(body)))
        .get("token")
        .asText();
  }

  static JsonNode created(Http.Response response) {
    assertThat(response.status()).as(response.text()).isEqualTo(201);
    return response.json();
  }
}
