package io.engram.administration;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.ApiContract;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Every route under /v1/organizations/{org_id} and /v1/nano/{nano_id} that the OpenAPI document
 * lists, called on another
 * organization with each kind of this organization's credentials: never a success, never a
 * validation error (which would tell that the organization exists), and nothing of the other
 * organization changes. New routes join the matrix by being documented.
 */
class OrganizationIsolationTest {

  @Test
  void anotherOrganizationsRoutesAreClosedToEveryCredentialOfThisOne() {
    try (TestServer server = TestServer.start()) {
      String mine = server.createOrganization("seed");
      // Scale: the plan that may register custom domains.
      String theirs = server.createOrganization("scale");
      Map<String, String> theirIds = new LinkedHashMap<>();
      theirIds.put("org_id", theirs);
      theirIds.put(
          "token_id",
          created(server, theirs, "tokens", "{\"name\":\"t\",\"scopes\":[\"memory:read\"]}"));
      theirIds.put(
          "key_id",
          created(server, theirs, "api-keys", "{\"name\":\"k\",\"permissions\":[\"inference\"]}"));
      theirIds.put(
          "channel_id",
          created(server, theirs, "alert-channels", "{\"url\":\"http://127.0.0.1:9/hook\"}"));
      assertThat(server
              .asOperator(server
                  .http
                  .post("/v1/organizations/" + theirs + "/env")
                  .json("{\"variables\":{\"REGION\":\"north\"}}"))
              .status())
          .isEqualTo(200);
      theirIds.put("VARIABLE_NAME", "REGION");
      theirIds.put(
          "user_id",
          server
              .createUser(theirs, "them@isolation.example", "member", "their own passphrase")
              .get("id")
              .asText());
      theirIds.put(
          "bridge_id",
          created(
              server,
              theirs,
              "action-bridges",
              "{\"capability\":\"create_orders\",\"url\":\"http://127.0.0.1:9/bridge\"}"));
      // Executions come only from conversations (AssistantChatTest proves another organization's
      // is a 404); here an id of the right shape stands for one.
      theirIds.put("execution_id", "exe_01q3eep1806qe6yg1awkh2p0hh");
      // A request of theirs in the request log answers 404 to this organization as a made-up one.
      theirIds.put("request_id", "req_01q3eep1806qe6yg1awkh2p0hh");
      theirIds.put("nano_id", created(server, theirs, "instances", "{\"name\":\"theirs\"}"));
      assertThat(server
              .asOperator(server
                  .http
                  .method(
                      "PUT", "/v1/nano/" + theirIds.get("nano_id") + "/storage/files/data/x.txt")
                  .body("text/plain", "theirs"))
              .status())
          .isEqualTo(201);
      theirIds.put("path", "data/x.txt");
      theirIds.put("conversation_id", "conv_01q3eep1806qe6yg1awkh2p0hh");
      Http.Response snapshot = server.asOperator(
          server.http.post("/v1/nano/" + theirIds.get("nano_id") + "/snapshot").json("{}"));
      assertThat(snapshot.status()).as(snapshot.text()).isEqualTo(201);
      theirIds.put("snapshot_id", snapshot.json().get("id").asText());
      Http.Response copy = server.asOperator(server
          .http
          .post("/v1/nano/" + theirIds.get("nano_id") + "/storage/copy")
          .json("{\"source_path\":\"data/x.txt\",\"destination_nano\":\"" + theirIds.get("nano_id")
              + "\",\"destination_path\":\"data/y.txt\"}"));
      assertThat(copy.status()).as(copy.text()).isEqualTo(202);
      theirIds.put("job_id", copy.json().get("id").asText());
      awaitFile(server, theirIds.get("nano_id"), "data/y.txt");
      // Connecting a store needs one to reach (ObjectStoresTest); an id of the right shape here.
      theirIds.put("store_id", "ost_01q3eep1806qe6yg1awkh2p0hh");
      theirIds.put(
          "domain_id", created(server, theirs, "domain", "{\"domain\":\"theirs.example\"}"));
      // A certificate needs a verified domain (TlsListenerTest); an id of the right shape here.
      theirIds.put("certificate_id", "cert_01q3eep1806qe6yg1awkh2p0hh");
      theirIds.put(
          "peering_id",
          created(
              server,
              theirs,
              "vpc-peering",
              "{\"provider\":\"aws\",\"vpc_id\":\"vpc-0a1b2c3d\",\"region\":\"eu-west-1\","
                  + "\"cidr\":\"172.20.0.0/16\",\"account_id\":\"123456789012\"}"));
      theirIds.put(
          "endpoint_id",
          created(
              server,
              theirs,
              "private-endpoint",
              "{\"vpc_id\":\"vpc-0a1b2c3d\",\"subnet_ids\":[\"subnet-0a1b2c3d\"],"
                  + "\"security_group_ids\":[\"sg-0a1b2c3d\"]}"));
      assertThat(server
              .asOperator(server
                  .http
                  .post("/v1/organizations/" + theirs + "/firewall")
                  .json("{\"outbound_rules\":[{\"destination\":\"a.example\",\"port\":443,"
                      + "\"protocol\":\"tcp\",\"action\":\"deny\"}]}"))
              .status())
          .isEqualTo(200);
      theirIds.put(
          "provider_id",
          created(
              server,
              theirs,
              "providers",
              "{\"name\":\"theirs\",\"kind\":\"openai\",\"base_url\":\"http://theirs.example/v1\","
                  + "\"api_key\":\"their-secret\"}"));
      Http.Response model = server.asOperator(server
          .http
          .post("/v1/organizations/" + theirs + "/models")
          .json("{\"id\":\"their-model\",\"deployments\":[{\"provider_id\":\""
              + theirIds.get("provider_id") + "\",\"model\":\"m\"}]}"));
      assertThat(model.status()).as(model.text()).isEqualTo(201);
      theirIds.put("model_id", "their-model");
      theirIds.put(
          "budget_id",
          created(
              server,
              theirs,
              "budgets",
              "{\"scope\":\"organization\",\"period\":\"day\",\"limit\":5}"));
      theirIds.put(
          "guardrail_id",
          created(
              server,
              theirs,
              "guardrails",
              "{\"name\":\"theirs\",\"applies_to\":[\"input\"],\"check\":{\"type\":\"secrets\"},"
                  + "\"action\":\"block\"}"));
      // Checked once now: with the test clock standing still, no later check changes the record.
      assertThat(server
              .asOperator(server
                  .http
                  .post("/v1/organizations/" + theirs + "/domain/" + theirIds.get("domain_id")
                      + "/verify")
                  .json("{}"))
              .status())
          .isEqualTo(200);
      String before = snapshot(server, theirs);

      List<String> credentials = List.of(
          server.apiKey(mine, 1000, "admin"),
          server.apiKey(mine, 1000, "inference", "training", "models"),
          server.token(mine, null, "memory:read", "memory:write", "inference:chat"));
      List<ApiContract.Operation> operations = ApiContract.operations().stream()
          .filter(op -> op.template().startsWith("/v1/organizations/{org_id}")
              || op.template().startsWith("/v1/nano/{nano_id}"))
          .toList();
      assertThat(operations).hasSizeGreaterThan(20);
      for (ApiContract.Operation operation : operations) {
        String path = operation.template();
        for (Map.Entry<String, String> id : theirIds.entrySet()) {
          path = path.replace("{" + id.getKey() + "}", id.getValue());
        }
        assertThat(path)
            .as("OrganizationIsolationTest needs an id of the other organization for " + path)
            .doesNotContain("{");
        for (String credential : credentials) {
          Http.Call call = server.http.method(operation.method(), path).bearer(credential);
          if (!operation.method().equals("GET") && !operation.method().equals("DELETE")) {
            call.json("{}");
          }
          Http.Response response = call.send();
          assertThat(response.status())
              .as("%s %s -> %s", operation.method(), path, response.text())
              .isIn(403, 404);
        }
      }
      assertThat(snapshot(server, theirs)).isEqualTo(before);
    }
  }

  /** Waits for a copy job to land its file, so the state compared after is settled. */
  private static void awaitFile(TestServer server, String nano, String path) {
    for (int i = 0; i < 600; i++) {
      if (server
              .asOperator(server.http.get("/v1/nano/" + nano + "/storage/files/" + path))
              .status()
          == 200) {
        return;
      }
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
    }
    throw new AssertionError(path + " never arrived");
  }

  private static String created(TestServer server, String org, String collection, String json) {
    Http.Response response = server.asOperator(
        server.http.post("/v1/organizations/" + org + "/" + collection).json(json));
    assertThat(response.status()).as(response.text()).isEqualTo(201);
    return response.json().get("id").asText();
  }

  /** What the other organization holds, as its operator sees it. */
  private static String snapshot(TestServer server, String org) {
    StringBuilder all = new StringBuilder();
    for (String part : List.of(
        "",
        "/tokens",
        "/api-keys",
        "/alert-channels",
        "/env",
        "/config",
        "/audit",
        "/domain",
        "/ssl",
        "/allowlist",
        "/firewall",
        "/providers",
        "/models",
        "/vpc-peering",
        "/private-endpoint",
        "/instances",
        "/storage",
        "/guardrails")) {
      Http.Response response =
          server.asOperator(server.http.get("/v1/organizations/" + org + part));
      all.append(part)
          .append(response.status())
          .append(response.text().replaceAll("\"in_use\":\\{[^}]*}", ""));
    }
    return all.toString();
  }
}
