package io.engram.network;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.Http;
import io.engram.support.RawHttp;
import io.engram.support.TestServer;
import java.net.InetAddress;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * VPC peerings and private endpoints: validated per provider, pending until the operator (the
 * manual provisioner) accepts or fails them, deletable; an accepted peering's range reaches the
 * organization through its allowlist.
 */
class NetworkLinksTest {
  private static final String PEERING = """
      {"provider":"aws","vpc_id":"vpc-0a1b2c3d4e5f60718","region":"eu-west-1",
       "cidr":"172.20.0.0/16","account_id":"123456789012"}""";
  private static TestServer server;

  @BeforeAll
  static void start() {
    server = TestServer.start();
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private record Org(String id, String key) {}

  private static Org org() {
    String id = server.createOrganization("scale");
    return new Org(id, server.apiKey(id, 1000, "admin"));
  }

  private static Http.Response post(Org org, String path, String json) {
    return server
        .http
        .post("/v1/organizations/" + org.id() + path)
        .bearer(org.key())
        .json(json)
        .send();
  }

  private static Http.Response operator(String path, String json) {
    return server.asOperator(server.http.post(path).json(json));
  }

  @Test
  void aPeeringWaitsForTheOperatorAndTellsTheCustomerWhatToDo() {
    Org org = org();
    Http.Response created = post(org, "/vpc-peering", PEERING);
    assertThat(created.status()).as(created.text()).isEqualTo(201);
    JsonNode peering = created.json();
    String id = peering.get("id").asText();
    assertThat(peering.get("status").asText()).isEqualTo("pending_acceptance");
    assertThat(peering.get("cidr").asText()).isEqualTo("172.20.0.0/16");
    assertThat(peering.at("/instructions/provisioner").asText()).isEqualTo("manual");
    assertThat(peering.at("/instructions/next_step").asText()).contains("vpc-0a1b2c3d4e5f60718");

    // The organization cannot accept its own request; the operator sees it in the queue.
    assertThat(server
            .http
            .post("/v1/admin/network/requests/" + id + "/accept")
            .bearer(org.key())
            .json("{}")
            .send()
            .status())
        .isEqualTo(403);
    assertThat(server
            .asOperator(server.http.get("/v1/admin/network/requests?status=pending_acceptance"))
            .text())
        .contains(id);
    Http.Response accepted = operator(
        "/v1/admin/network/requests/" + id + "/accept",
        "{\"details\":{\"peering_connection_id\":\"pcx-0123456789abcdef0\"}}");
    assertThat(accepted.status()).as(accepted.text()).isEqualTo(200);
    assertThat(accepted.json().get("status").asText()).isEqualTo("active");
    assertThat(accepted.json().at("/instructions/peering_connection_id").asText())
        .isEqualTo("pcx-0123456789abcdef0");
    assertThat(operator("/v1/admin/network/requests/" + id + "/fail", "{\"reason\":\"late\"}")
            .status())
        .isEqualTo(409);

    // Overlaps: Engram's own 10.0.0.0/8 and the organization's other peerings.
    Http.Response overlap =
        post(org, "/vpc-peering", PEERING.replace("172.20.0.0/16", "172.20.5.0/24"));
    assertThat(overlap.status()).isEqualTo(400);
    assertThat(overlap.json().at("/error/message").asText()).contains(id);
    Http.Response reserved =
        post(org, "/vpc-peering", PEERING.replace("172.20.0.0/16", "10.200.0.0/16"));
    assertThat(reserved.json().at("/error/param").asText()).isEqualTo("cidr");

    assertThat(server
            .http
            .delete("/v1/organizations/" + org.id() + "/vpc-peering/" + id)
            .bearer(org.key())
            .send()
            .status())
        .isEqualTo(204);
    assertThat(server
            .http
            .get("/v1/organizations/" + org.id() + "/vpc-peering")
            .bearer(org.key())
            .send()
            .json()
            .get("data")
            .size())
        .isZero();
    String audit = server
        .http
        .get("/v1/organizations/" + org.id() + "/audit")
        .bearer(org.key())
        .send()
        .text();
    assertThat(audit)
        .contains("network.vpc_peering.create")
        .contains("network.vpc_peering.active")
        .contains("network.vpc_peering.delete");
  }

  @Test
  void anAcceptedPeeringsRangeReachesTheOrganizationThroughItsAllowlist() throws Exception {
    Org org = org();
    post(org, "/allowlist", "{\"ip_ranges\":[{\"cidr\":\"127.0.0.1/32\"}]}");
    InetAddress peer = InetAddress.getByName("127.0.0.2");
    assertThat(models(peer, org).status()).isEqualTo(403);
    String id = post(org, "/vpc-peering", PEERING.replace("172.20.0.0/16", "127.0.0.0/28"))
        .json()
        .get("id")
        .asText();
    assertThat(models(peer, org).status()).isEqualTo(403); // pending: not yet
    operator("/v1/admin/network/requests/" + id + "/accept", "{}");
    assertThat(models(peer, org).status()).isEqualTo(200);
    server
        .http
        .delete("/v1/organizations/" + org.id() + "/vpc-peering/" + id)
        .bearer(org.key())
        .send();
    assertThat(models(peer, org).status()).isEqualTo(403);
  }

  private static RawHttp.Response models(InetAddress from, Org org) throws Exception {
    return RawHttp.send(
        from,
        server.engram.port(),
        "127.0.0.1",
        "GET",
        "/v1/models",
        null,
        "Authorization",
        "Bearer " + org.key());
  }

  @Test
  void privateEndpointsFollowTheSameLifecycle() {
    Org org = org();
    Http.Response created = post(org, "/private-endpoint", """
        {"vpc_id":"vpc-0a1b2c3d","subnet_ids":["subnet-0a1b2c3d","subnet-1a2b3c4d"],
         "security_group_ids":["sg-0a1b2c3d4e5f60718"]}""");
    assertThat(created.status()).as(created.text()).isEqualTo(201);
    assertThat(created.json().get("provider").asText()).isEqualTo("aws");
    String id = created.json().get("id").asText();
    Http.Response again = post(org, "/private-endpoint", """
        {"vpc_id":"vpc-0a1b2c3d","subnet_ids":["subnet-0a1b2c3d"],"security_group_ids":["sg-0a1b2c3d"]}""");
    assertThat(again.status()).isEqualTo(409);
    Http.Response failed = operator(
        "/v1/admin/network/requests/" + id + "/fail",
        "{\"reason\":\"the endpoint service is full\"}");
    assertThat(failed.json().get("status").asText()).isEqualTo("failed");
    assertThat(failed.json().get("failure_reason").asText()).contains("full");
    Http.Response azure = post(org, "/private-endpoint", """
        {"vpc_id":"/subscriptions/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0/resourceGroups/prod/providers/Microsoft.Network/virtualNetworks/prod-vnet",
         "subnet_ids":["default"],"security_group_ids":["prod-nsg"]}""");
    assertThat(azure.json().get("provider").asText()).isEqualTo("azure");
  }

  @Test
  void badRequestsNameTheField() {
    Org org = org();
    String[][] peerings = {
      {PEERING.replace("\"aws\"", "\"oracle\""), "provider"},
      {PEERING.replace("vpc-0a1b2c3d4e5f60718", "vpc-xyz"), "vpc_id"},
      {PEERING.replace("eu-west-1", "mars-north-1"), "region"},
      {PEERING.replace("123456789012", "12345"), "account_id"},
      {PEERING.replace("172.20.0.0/16", "172.20.0.0/30"), "cidr"},
      {PEERING.replace("172.20.0.0/16", "not-a-cidr"), "cidr"},
      {PEERING.replace("\"region\"", "\"zone\""), "zone"},
      {
        "{\"provider\":\"gcp\",\"vpc_id\":\"Prod_Net\",\"region\":\"us-central1\","
            + "\"cidr\":\"172.21.0.0/16\",\"account_id\":\"acme-prod-123\"}",
        "vpc_id"
      },
      {
        "{\"provider\":\"gcp\",\"vpc_id\":\"prod-net\",\"region\":\"eu-west-1\","
            + "\"cidr\":\"172.21.0.0/16\",\"account_id\":\"acme-prod-123\"}",
        "region"
      },
    };
    for (String[] c : peerings) {
      Http.Response response = post(org, "/vpc-peering", c[0]);
      assertThat(response.status()).as(c[0]).isEqualTo(400);
      assertThat(response.json().at("/error/param").asText()).as(c[0]).isEqualTo(c[1]);
    }
    String[][] endpoints = {
      {
        "{\"vpc_id\":\"vpc-0a1b2c3d\",\"subnet_ids\":[],\"security_group_ids\":[\"sg-0a1b2c3d\"]}",
        "subnet_ids"
      },
      {
        "{\"vpc_id\":\"vpc-0a1b2c3d\",\"subnet_ids\":[\"subnet-zz\"],\"security_group_ids\":[\"sg-0a1b2c3d\"]}",
        "subnet_ids[0]"
      },
      {"{\"vpc_id\":\"vpc-0a1b2c3d\",\"subnet_ids\":[\"subnet-0a1b2c3d\"]}", "security_group_ids"},
      {"{\"vpc_id\":\"???\",\"subnet_ids\":[\"a\"],\"security_group_ids\":[\"b\"]}", "vpc_id"},
    };
    for (String[] c : endpoints) {
      Http.Response response = post(org, "/private-endpoint", c[0]);
      assertThat(response.status()).as(c[0]).isEqualTo(400);
      assertThat(response.json().at("/error/param").asText()).as(c[0]).isEqualTo(c[1]);
    }
  }
}
