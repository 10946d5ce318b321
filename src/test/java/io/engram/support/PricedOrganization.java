package io.engram.support;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * An organization of a test server with its own provider on a fake upstream and two priced models:
 * "priced" (chat and completions, $1,000 per million completion tokens: the fake's five pieces
 * cost {@link #REQUEST} a request at max_tokens 5) and "embedder" (embeddings, input priced so the
 * fake's seven tokens an input cost {@link #EMBEDDING}); its admin and inference keys.
 */
public record PricedOrganization(Http http, String id, String admin, String key) {
  /** What one chat of "priced" costs, in US dollars. */
  public static final double REQUEST = 0.005;

  /** What one embedding input of "embedder" costs (the fake counts seven tokens an input). */
  public static final double EMBEDDING = 7 * 2 / 1e6;

  /** A new organization of the plan on {@code server}, its models answered by {@code upstream}. */
  public static PricedOrganization create(TestServer server, String plan, FakeUpstream upstream) {
    return create(server.operator(), server.http, plan, upstream);
  }

  /** The same, made by {@code operator} and called at {@code http} (a balancer, say). */
  public static PricedOrganization create(
      Operator operator, Http http, String plan, FakeUpstream upstream) {
    String id = operator.createOrganization(plan);
    PricedOrganization org = new PricedOrganization(
        http,
        id,
        operator.createApiKey(id, 100_000, "admin").path("token").asText(),
        operator.createApiKey(id, 100_000, "inference").path("token").asText());
    Http.Response provider = org.post("/providers", """
        {"name":"fake","kind":"openai","base_url":"%s","api_key":"k"}""".formatted(upstream.baseUrl()));
    assertThat(provider.status()).as(provider.text()).isEqualTo(201);
    String providerId = provider.json().path("id").asText();
    org.created("/models", """
        {"id":"priced","context_length":4096,"retries":0,
         "pricing":{"input_per_million":0,"output_per_million":1000},
         "deployments":[{"provider_id":"%s","model":"upstream-model"}]}""".formatted(providerId));
    org.created("/models", """
        {"id":"embedder","type":"embedding","retries":0,"pricing":{"input_per_million":2},
         "deployments":[{"provider_id":"%s","model":"upstream-embedder"}]}""".formatted(providerId));
    return org;
  }

  /** A chat of "priced" at max_tokens 5 on {@code path}, sent with {@code credential}. */
  public Http.Response chat(String credential, String path) {
    return chat(credential, path, http);
  }

  /** The same, sent to {@code node} (one of several sharing the organization). */
  public Http.Response chat(String credential, String path, Http node) {
    return node.post(path)
        .bearer(credential)
        .json("{\"model\":\"priced\",\"max_tokens\":5,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}")
        .send();
  }

  /**
   * Adds "metered" on the organization's provider: its prompts and replies priced alike, $1,000 per
   * million tokens, so what a provider charges for a prompt shows in the cost.
   */
  public void addMetered() {
    String providerId = http.get("/v1/organizations/" + id + "/providers")
        .bearer(admin)
        .send()
        .json()
        .path("data")
        .path(0)
        .path("id")
        .asText();
    created("/models", """
        {"id":"metered","context_length":4096,"retries":0,
         "pricing":{"input_per_million":1000,"output_per_million":1000},
         "deployments":[{"provider_id":"%s","model":"upstream-model"}]}""".formatted(providerId));
  }

  public Http.Response chat() {
    return chat(key, "/v1/chat/completions");
  }

  /** Encodes an organization-wide memory with {@code credential} (201); its id. */
  public String remember(String credential, String text) {
    Http.Response created = http.post("/v1/memory")
        .bearer(credential)
        .json("{\"text\":" + io.engram.platform.json.Json.write(text) + "}")
        .send();
    assertThat(created.status()).as(created.text()).isEqualTo(201);
    return created.json().path("id").asText();
  }

  /** A POST to the organization's {@code path}, as its admin. */
  public Http.Response post(String path, String body) {
    return http.post("/v1/organizations/" + id + path).bearer(admin).json(body).send();
  }

  /** A GET of the organization's {@code path}, as its admin (200). */
  public JsonNode read(String path) {
    Http.Response read =
        http.get("/v1/organizations/" + id + path).bearer(admin).send();
    assertThat(read.status()).as(read.text()).isEqualTo(200);
    return read.json();
  }

  private void created(String path, String body) {
    Http.Response created = post(path, body);
    assertThat(created.status()).as(created.text()).isEqualTo(201);
  }

  /** Patches the organization's configuration as its admin (200). */
  public void configure(String patch) {
    Http.Response patched = http.patch("/v1/organizations/" + id + "/config")
        .bearer(admin)
        .json(patch)
        .send();
    assertThat(patched.status()).as(patched.text()).isEqualTo(200);
  }

  /** A budget made (201), its id. */
  public String budget(String body) {
    Http.Response created = post("/budgets", body);
    assertThat(created.status()).as(created.text()).isEqualTo(201);
    return created.json().path("id").asText();
  }

  /** The budget as it stands (200). */
  public JsonNode get(String budgetId) {
    Http.Response read = http.get("/v1/organizations/" + id + "/budgets/" + budgetId)
        .bearer(admin)
        .send();
    assertThat(read.status()).as(read.text()).isEqualTo(200);
    return read.json();
  }
}
