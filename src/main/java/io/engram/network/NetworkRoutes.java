package io.engram.network;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.access.Access;
import io.engram.access.ManagedOrganization;
import io.engram.access.Principal;
import io.engram.access.Requires;
import io.engram.network.NetworkStore.Audit;
import io.engram.organizations.OrganizationStore;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.HttpServer;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.engram.platform.json.Json;
import io.engram.settings.Cidr;
import io.engram.settings.ConfigField;
import io.engram.settings.OrganizationConfigs;
import io.javalin.http.Context;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * An organization's network routes (docs/network.md): custom domains, certificates, the IP
 * allowlist, the outbound firewall, VPC peerings and private endpoints, for the operator or an
 * admin key of the organization; and the operator's routes that accept or fail peering and
 * endpoint requests (the manual provisioner). Every change is audited ({@code GET /audit}).
 */
final class NetworkRoutes implements RouteModule {
  private static final String ORG = "/v1/organizations/{org_id}";
  private static final String REQUESTS = "/v1/admin/network/requests/{request_id}";
  private static final com.fasterxml.jackson.core.type.TypeReference<Map<String, Object>> DETAILS =
      new com.fasterxml.jackson.core.type.TypeReference<>() {};

  private final Network network;
  private final OrganizationStore organizations;
  private final OrganizationConfigs configs;
  private final Clock clock;
  private final long maxBodyBytes;

  NetworkRoutes(
      Network network,
      OrganizationStore organizations,
      OrganizationConfigs configs,
      Clock clock,
      long maxBodyBytes) {
    this.network = network;
    this.organizations = organizations;
    this.configs = configs;
    this.clock = clock;
    this.maxBodyBytes = maxBodyBytes;
  }

  @Override
  public void register(Routes routes) {
    // A custom domain that is not verified answers 404 on every path, before anything else; a
    // serving one answers browsers by its organization's CORS_ORIGINS.
    routes.filter(new DomainCors(network.state(), organizations, configs));
    routes.before(ctx -> {
      String host = ctx.req().getServerName();
      if (host != null) {
        network.state().organizationOf(host.toLowerCase(Locale.ROOT));
      }
      DomainCors.refusePreflight(ctx);
    });
    domains(routes);
    certificates(routes);
    allowlist(routes);
    firewall(routes);
    links(routes, NetworkLink.Kind.VPC_PEERING);
    links(routes, NetworkLink.Kind.PRIVATE_ENDPOINT);
    routes
        .get("/v1/admin/network/requests", Requires.account(), ctx -> {
          String state = ctx.queryParam("status");
          Responses.json(
              ctx,
              NetworkViews.list(
                  network.links().all(state).stream().map(NetworkViews::link).toList()));
        })
        .post(REQUESTS + "/accept", Requires.account(), ctx -> {
          Principal operator = Access.caller(ctx);
          ObjectNode body = JsonBody.parseObject(ctx, maxBodyBytes);
          JsonNode details = body.path("details");
          if (!details.isMissingNode() && !details.isObject()) {
            throw ApiException.badRequest("details", "'details' must be an object");
          }
          Map<String, Object> extra =
              details.isObject() ? Json.MAPPER.convertValue(details, DETAILS) : Map.of();
          NetworkLink accepted =
              network.links().accept(ctx.pathParam("request_id"), extra, audit(ctx, operator));
          network.refresh();
          Responses.json(ctx, NetworkViews.link(accepted));
        })
        .post(REQUESTS + "/fail", Requires.account(), ctx -> {
          Principal operator = Access.caller(ctx);
          JsonBody body = JsonBody.parse(ctx, maxBodyBytes);
          String reason = body.requiredString("reason", 1000);
          NetworkLink failed =
              network.links().fail(ctx.pathParam("request_id"), reason, audit(ctx, operator));
          network.refresh();
          Responses.json(ctx, NetworkViews.link(failed));
        });
  }

  private void domains(Routes routes) {
    routes
        .get(ORG + "/domain", Requires.organizationAdmin(), ctx -> {
          ManagedOrganization managed = managed(ctx);
          Responses.json(
              ctx,
              NetworkViews.list(network.domains().list(managed.orgId()).stream()
                  .map(NetworkViews::domain)
                  .toList()));
        })
        .post(ORG + "/domain", Requires.organizationAdmin(), ctx -> {
          ManagedOrganization managed = managed(ctx);
          JsonBody body = JsonBody.parse(ctx, maxBodyBytes).allowOnly(Set.of("domain"));
          CustomDomain created = network
              .domains()
              .create(
                  managed.organization(), body.requiredString("domain", 300), audit(ctx, managed));
          network.refresh();
          Responses.json(ctx, 201, NetworkViews.domain(created));
        })
        .get(ORG + "/domain/{domain_id}", Requires.organizationAdmin(), ctx -> {
          ManagedOrganization managed = managed(ctx);
          Responses.json(
              ctx,
              NetworkViews.domain(network.domains().list(managed.orgId()).stream()
                  .filter(domain -> domain.id().equals(ctx.pathParam("domain_id")))
                  .findFirst()
                  .orElseThrow(() -> ApiException.notFound(
                      "domain_not_found",
                      null,
                      "No custom domain " + ctx.pathParam("domain_id")))));
        })
        .post(ORG + "/domain/{domain_id}/verify", Requires.organizationAdmin(), ctx -> {
          ManagedOrganization managed = managed(ctx);
          CustomDomain checked = network
              .domains()
              .verify(managed.orgId(), ctx.pathParam("domain_id"), audit(ctx, managed));
          network.refresh();
          Responses.json(ctx, NetworkViews.domain(checked));
        })
        .delete(ORG + "/domain/{domain_id}", Requires.organizationAdmin(), ctx -> {
          ManagedOrganization managed = managed(ctx);
          network
              .domains()
              .delete(managed.orgId(), ctx.pathParam("domain_id"), audit(ctx, managed));
          network.refresh();
          ctx.status(204);
        });
  }

  private void certificates(Routes routes) {
    routes
        .get(ORG + "/ssl", Requires.organizationAdmin(), ctx -> {
          ManagedOrganization managed = managed(ctx);
          Responses.json(
              ctx,
              NetworkViews.list(network.certificates().list(managed.orgId()).stream()
                  .map(c -> NetworkViews.certificate(c, clock.instant()))
                  .toList()));
        })
        .post(ORG + "/ssl", Requires.organizationAdmin(), ctx -> {
          ManagedOrganization managed = managed(ctx);
          StoredCertificate stored = network
              .certificates()
              .upload(
                  managed.orgId(), ctx.contentType(), ctx.bodyInputStream(), audit(ctx, managed));
          network.refresh();
          Responses.json(ctx, 201, NetworkViews.certificate(stored, clock.instant()));
        })
        .delete(ORG + "/ssl/{certificate_id}", Requires.organizationAdmin(), ctx -> {
          ManagedOrganization managed = managed(ctx);
          network
              .certificates()
              .delete(managed.orgId(), ctx.pathParam("certificate_id"), audit(ctx, managed));
          network.refresh();
          ctx.status(204);
        });
  }

  private void allowlist(Routes routes) {
    routes
        .get(
            ORG + "/allowlist",
            Requires.organizationAdmin(),
            ctx -> showAllowlist(ctx, managed(ctx)))
        .post(ORG + "/allowlist", Requires.organizationAdmin(), ctx -> {
          ManagedOrganization managed = managed(ctx);
          replaceAllowlist(ctx, managed, JsonBody.parse(ctx, maxBodyBytes));
          showAllowlist(ctx, managed);
        })
        .delete(ORG + "/allowlist", Requires.organizationAdmin(), ctx -> {
          ManagedOrganization managed = managed(ctx);
          replaceAllowlist(
              ctx,
              managed,
              JsonBody.of(
                  Json.MAPPER.createObjectNode().set("ip_ranges", Json.MAPPER.createArrayNode())));
          ctx.status(204);
        });
  }

  /** The list replaces {@code network.allowed_ips} of the configuration: one list, audited. */
  private void replaceAllowlist(Context ctx, ManagedOrganization managed, JsonBody body) {
    body.allowOnly(Set.of("ip_ranges"));
    JsonNode entries = body.rawNotNull("ip_ranges");
    if (entries == null || !entries.isArray()) {
      throw ApiException.badRequest(
          "ip_ranges", "'ip_ranges' must be an array of {cidr, description}");
    }
    if (entries.size() > ConfigField.MAX_ALLOWED_IPS) {
      throw ApiException.badRequest(
          "ip_ranges",
          "An organization may list at most " + ConfigField.MAX_ALLOWED_IPS + " IP ranges");
    }
    Map<String, String> notes = new LinkedHashMap<>();
    ObjectNode patch = Json.MAPPER.createObjectNode();
    var ranges =
        patch.putObject(ConfigField.ALLOWED_IPS.group()).putArray(ConfigField.ALLOWED_IPS.field());
    for (int i = 0; i < entries.size(); i++) {
      String at = "ip_ranges[" + i + "]";
      JsonNode entry = entries.get(i);
      if (!entry.isObject()) {
        throw ApiException.badRequest(at, "'" + at + "' must be an object {cidr, description}");
      }
      entry.fieldNames().forEachRemaining(name -> {
        if (!name.equals("cidr") && !name.equals("description")) {
          throw ApiException.badRequest(
              at + "." + name,
              "'" + at + "." + name + "' is not a field of an entry (cidr, description)");
        }
      });
      JsonNode cidrNode = entry.get("cidr");
      if (cidrNode == null || !cidrNode.isTextual()) {
        throw ApiException.badRequest(
            at + ".cidr", "'" + at + ".cidr' must be an IPv4 CIDR string");
      }
      Cidr cidr;
      try {
        cidr = Cidr.parse(cidrNode.asText());
      } catch (IllegalArgumentException e) {
        throw ApiException.badRequest(at + ".cidr", e.getMessage());
      }
      if (notes.containsKey(cidr.toString()) || contains(ranges, cidr.toString())) {
        throw ApiException.badRequest(at + ".cidr", "'" + at + ".cidr' repeats " + cidr);
      }
      JsonNode description = entry.get("description");
      if (description != null && !description.isNull()) {
        if (!description.isTextual() || description.asText().length() > 256) {
          throw ApiException.badRequest(
              at + ".description",
              "'" + at + ".description' must be a string of at most 256 characters");
        }
        notes.put(cidr.toString(), description.asText());
      }
      ranges.add(cidr.toString());
    }
    configs.update(
        managed.organization(),
        patch,
        managed.principal().credentialId(),
        HttpServer.requestId(ctx),
        "network.allowlist.replace",
        h -> NetworkStore.replaceAllowlistNotes(h, managed.orgId(), notes));
  }

  private static boolean contains(
      com.fasterxml.jackson.databind.node.ArrayNode ranges, String cidr) {
    for (JsonNode range : ranges) {
      if (range.asText().equals(cidr)) {
        return true;
      }
    }
    return false;
  }

  private void showAllowlist(Context ctx, ManagedOrganization managed) {
    Responses.json(
        ctx,
        NetworkViews.allowlist(
            configs.effective(managed.organization()).allowedIps(),
            network.allowlistNotes(managed.orgId())));
  }

  private void firewall(Routes routes) {
    routes
        .get(
            ORG + "/firewall",
            Requires.organizationAdmin(),
            ctx -> Responses.json(
                ctx, NetworkViews.firewall(network.firewall(managed(ctx).orgId()))))
        .post(ORG + "/firewall", Requires.organizationAdmin(), ctx -> {
          ManagedOrganization managed = managed(ctx);
          JsonBody body = JsonBody.parse(ctx, maxBodyBytes).allowOnly(Set.of("outbound_rules"));
          FirewallRules rules = FirewallRules.parse(body.rawNotNull("outbound_rules"));
          Responses.json(
              ctx,
              NetworkViews.firewall(
                  network.replaceFirewall(managed.orgId(), rules, audit(ctx, managed))));
        })
        .delete(ORG + "/firewall", Requires.organizationAdmin(), ctx -> {
          ManagedOrganization managed = managed(ctx);
          network.replaceFirewall(managed.orgId(), FirewallRules.NONE, audit(ctx, managed));
          ctx.status(204);
        });
  }

  private void links(Routes routes, NetworkLink.Kind kind) {
    String path = ORG + "/" + kind.path;
    routes
        .get(path, Requires.organizationAdmin(), ctx -> {
          ManagedOrganization managed = managed(ctx);
          Responses.json(
              ctx,
              NetworkViews.list(network.links().list(managed.orgId(), kind).stream()
                  .map(NetworkViews::link)
                  .toList()));
        })
        .post(path, Requires.organizationAdmin(), ctx -> {
          ManagedOrganization managed = managed(ctx);
          JsonBody body = JsonBody.parse(ctx, maxBodyBytes);
          NetworkLink created = kind == NetworkLink.Kind.VPC_PEERING
              ? network.links().requestPeering(managed.orgId(), body, audit(ctx, managed))
              : network.links().requestEndpoint(managed.orgId(), body, audit(ctx, managed));
          network.refresh();
          Responses.json(ctx, 201, NetworkViews.link(created));
        })
        .get(path + "/{" + kind.idParam + "}", Requires.organizationAdmin(), ctx -> {
          ManagedOrganization managed = managed(ctx);
          Responses.json(ctx, NetworkViews.link(own(managed, kind, ctx.pathParam(kind.idParam))));
        })
        .delete(path + "/{" + kind.idParam + "}", Requires.organizationAdmin(), ctx -> {
          ManagedOrganization managed = managed(ctx);
          own(managed, kind, ctx.pathParam(kind.idParam));
          NetworkLink left = network
              .links()
              .delete(managed.orgId(), kind, ctx.pathParam(kind.idParam), audit(ctx, managed));
          network.refresh();
          if (left == null) {
            ctx.status(204);
          } else {
            Responses.json(ctx, 202, NetworkViews.link(left));
          }
        });
  }

  private NetworkLink own(ManagedOrganization managed, NetworkLink.Kind kind, String id) {
    return network
        .links()
        .find(id)
        .filter(link -> link.orgId().equals(managed.orgId()) && link.kind() == kind)
        .orElseThrow(() ->
            ApiException.notFound("network_request_not_found", null, "No such request " + id));
  }

  private ManagedOrganization managed(Context ctx) {
    return ManagedOrganization.of(ctx);
  }

  private static Audit audit(Context ctx, ManagedOrganization managed) {
    return audit(ctx, managed.principal());
  }

  private static Audit audit(Context ctx, Principal principal) {
    return new Audit(principal.credentialId(), HttpServer.requestId(ctx));
  }
}
