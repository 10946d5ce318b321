package io.engram.network;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.network.NetworkStore.Audit;
import io.engram.platform.Ids;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import io.engram.platform.json.Json;
import io.engram.settings.Cidr;
import java.time.Clock;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * VPC peerings and private endpoints: validated per provider, stored {@code pending_acceptance},
 * handed to the {@link Provisioner}, then accepted (active) or failed by it (or by the operator,
 * for the manual one). Deleting hands the record back to the provisioner for teardown.
 */
public final class NetworkLinks {
  static final int MAX_PER_KIND = 10;
  private static final Cidr RESERVED = Cidr.parse(ManualProvisioner.ENGRAM_CIDR);

  private final NetworkStore store;
  private final Provisioner provisioner;
  private final Clock clock;

  NetworkLinks(NetworkStore store, Provisioner provisioner, Clock clock) {
    this.store = store;
    this.provisioner = provisioner;
    this.clock = clock;
  }

  List<NetworkLink> list(String orgId, NetworkLink.Kind kind) {
    return store.links(orgId, kind);
  }

  NetworkLink requestPeering(String orgId, JsonBody body, Audit who) {
    body.allowOnly(Set.of("provider", "vpc_id", "region", "cidr", "account_id"));
    CloudIds cloud = CloudIds.of(body.requiredString("provider", 16).toLowerCase(), "provider");
    String vpcId = body.requiredString("vpc_id", 300).strip();
    cloud.vpc(vpcId);
    String region = body.requiredString("region", 64).strip();
    cloud.region(region);
    String accountId = body.requiredString("account_id", 64).strip();
    cloud.account(accountId);
    Cidr cidr;
    try {
      cidr = Cidr.parse(body.requiredString("cidr", 32));
    } catch (IllegalArgumentException e) {
      throw ApiException.badRequest("cidr", e.getMessage());
    }
    if (cidr.prefix() < 8 || cidr.prefix() > 28) {
      throw ApiException.badRequest("cidr", "'cidr' must be a range from /8 to /28");
    }
    if (overlap(cidr, RESERVED)) {
      throw ApiException.badRequest(
          "cidr", "'cidr' " + cidr + " overlaps 10.0.0.0/8, Engram's own network");
    }
    ObjectNode request = Json.MAPPER
        .createObjectNode()
        .put("vpc_id", vpcId)
        .put("region", region)
        .put("cidr", cidr.toString())
        .put("account_id", accountId);
    return create(orgId, NetworkLink.Kind.VPC_PEERING, cloud, request, who, existing -> {
      for (NetworkLink other : existing) {
        Cidr taken = Cidr.parse(other.request().path("cidr").asText());
        if (overlap(cidr, taken)) {
          throw ApiException.badRequest(
              "cidr", "'cidr' " + cidr + " overlaps " + taken + " of the peering " + other.id());
        }
      }
    });
  }

  NetworkLink requestEndpoint(String orgId, JsonBody body, Audit who) {
    body.allowOnly(Set.of("provider", "vpc_id", "subnet_ids", "security_group_ids"));
    String vpcId = body.requiredString("vpc_id", 300).strip();
    CloudIds cloud = body.has("provider")
        ? CloudIds.of(body.requiredString("provider", 16).toLowerCase(), "provider")
        : CloudIds.ofVpc(vpcId);
    cloud.vpc(vpcId);
    List<String> subnets = requiredList(body, "subnet_ids", 16);
    cloud.subnets(subnets);
    List<String> groups = requiredList(body, "security_group_ids", 5);
    cloud.securityGroups(groups);
    ObjectNode request = Json.MAPPER.createObjectNode().put("vpc_id", vpcId);
    subnets.forEach(request.putArray("subnet_ids")::add);
    groups.forEach(request.putArray("security_group_ids")::add);
    return create(orgId, NetworkLink.Kind.PRIVATE_ENDPOINT, cloud, request, who, existing -> {
      for (NetworkLink other : existing) {
        if (other.request().path("vpc_id").asText().equals(vpcId)) {
          throw ApiException.conflict(
              "private_endpoint_exists",
              "vpc_id",
              "The VPC " + vpcId + " already has the private endpoint " + other.id());
        }
      }
    });
  }

  private NetworkLink create(
      String orgId,
      NetworkLink.Kind kind,
      CloudIds cloud,
      ObjectNode request,
      Audit who,
      java.util.function.Consumer<List<NetworkLink>> againstExisting) {
    Instant now = clock.instant();
    NetworkLink pending = new NetworkLink(
        Ids.newId(kind.prefix, now.toEpochMilli()),
        orgId,
        kind,
        cloud.wireName(),
        request,
        NetworkLink.State.PENDING_ACCEPTANCE,
        Map.of(),
        null,
        now,
        now);
    NetworkLink stored = withInstructions(pending, provisioner.requested(pending), now);
    store.db().write(h -> {
      List<NetworkLink> existing = NetworkStore.links(h, orgId, kind).stream()
          .filter(link -> link.state() != NetworkLink.State.FAILED
              && link.state() != NetworkLink.State.DELETING)
          .toList();
      if (existing.size() >= MAX_PER_KIND) {
        throw ApiException.badRequest(
            null, "An organization may have at most " + MAX_PER_KIND + " of these requests");
      }
      againstExisting.accept(existing);
      NetworkStore.insertLink(h, stored);
      NetworkStore.changed(
          h,
          now,
          orgId,
          kind.object + ".create",
          who,
          Map.of("id", stored.id(), "request", request));
      return null;
    });
    return stored;
  }

  /** Deletes (or starts tearing down) the organization's record; 404 for another's or none. */
  NetworkLink delete(String orgId, NetworkLink.Kind kind, String id, Audit who) {
    NetworkLink link = find(id)
        .filter(l -> l.orgId().equals(orgId) && l.kind() == kind)
        .orElseThrow(() -> notFound(id));
    boolean gone = provisioner.release(link);
    Instant now = clock.instant();
    NetworkLink deleting = new NetworkLink(
        link.id(),
        link.orgId(),
        link.kind(),
        link.provider(),
        link.request(),
        NetworkLink.State.DELETING,
        link.instructions(),
        link.failureReason(),
        link.createdAt(),
        now);
    store.db().write(h -> {
      if (gone) {
        NetworkStore.deleteLink(h, id);
      } else {
        NetworkStore.updateLink(h, deleting);
      }
      NetworkStore.changed(h, now, orgId, kind.object + ".delete", who, Map.of("id", id));
      return null;
    });
    return gone ? null : deleting;
  }

  /** The provisioner (or operator) finished: active, with what the customer needs to know. */
  public NetworkLink accept(String id, Map<String, Object> details, Audit who) {
    return transition(id, NetworkLink.State.ACTIVE, details, null, who);
  }

  /** The provisioner (or operator) could not carry the request out: failed, with the reason. */
  public NetworkLink fail(String id, String reason, Audit who) {
    return transition(id, NetworkLink.State.FAILED, Map.of(), reason, who);
  }

  /** A teardown the provisioner finished: the record goes. */
  public void release(String id) {
    store.db().write(h -> {
      NetworkStore.deleteLink(h, id);
      return null;
    });
  }

  /** Every organization's requests (the operator's queue), of one status or all. */
  List<NetworkLink> all(String status) {
    if (status != null) {
      try {
        NetworkLink.State.fromWire(status);
      } catch (IllegalArgumentException e) {
        throw ApiException.badRequest(
            "status", "'status' must be pending_acceptance, active, failed or deleting");
      }
    }
    return store.allLinks(status);
  }

  java.util.Optional<NetworkLink> find(String id) {
    return store.db().read(h -> NetworkStore.link(h, id));
  }

  private NetworkLink transition(
      String id, NetworkLink.State state, Map<String, Object> details, String reason, Audit who) {
    return store.db().write(h -> {
      NetworkLink link = NetworkStore.link(h, id).orElseThrow(() -> notFound(id));
      if (link.state() != NetworkLink.State.PENDING_ACCEPTANCE) {
        throw ApiException.conflict(
            "request_not_pending",
            "The request " + id + " is " + link.state().wireName() + "; only a pending request "
                + "can be accepted or failed");
      }
      Instant now = clock.instant();
      Map<String, Object> instructions = new LinkedHashMap<>(link.instructions());
      instructions.putAll(details);
      NetworkLink next = new NetworkLink(
          link.id(),
          link.orgId(),
          link.kind(),
          link.provider(),
          link.request(),
          state,
          instructions,
          reason,
          link.createdAt(),
          now);
      NetworkStore.updateLink(h, next);
      NetworkStore.changed(
          h,
          now,
          link.orgId(),
          link.kind().object + "." + state.wireName(),
          who,
          Map.of("id", id, "before", link.state().wireName(), "after", state.wireName()));
      return next;
    });
  }

  private static NetworkLink withInstructions(
      NetworkLink link, Map<String, Object> instructions, Instant now) {
    return new NetworkLink(
        link.id(),
        link.orgId(),
        link.kind(),
        link.provider(),
        link.request(),
        link.state(),
        instructions,
        link.failureReason(),
        link.createdAt(),
        now);
  }

  private static List<String> requiredList(JsonBody body, String field, int max) {
    List<String> values = body.optionalStringList(field, max, 300)
        .orElseThrow(() -> ApiException.badRequest(field, "'" + field + "' is required"));
    if (values.isEmpty()) {
      throw ApiException.badRequest(field, "'" + field + "' needs at least one id");
    }
    return values;
  }

  private static boolean overlap(Cidr a, Cidr b) {
    int prefix = Math.min(a.prefix(), b.prefix());
    int mask = prefix == 0 ? 0 : -1 << (32 - prefix);
    return (a.network() & mask) == (b.network() & mask);
  }

  private static ApiException notFound(String id) {
    return ApiException.notFound("network_request_not_found", null, "No such request " + id);
  }
}
