package io.engram.network;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.Locale;
import java.util.Map;

/**
 * A VPC peering or a private endpoint: what the organization asked for ({@code request}), where it
 * stands, and what the customer must do on their side ({@code instructions}, written by the
 * provisioner).
 */
public record NetworkLink(
    String id,
    String orgId,
    Kind kind,
    String provider,
    JsonNode request,
    State state,
    Map<String, Object> instructions,
    String failureReason,
    Instant createdAt,
    Instant updatedAt) {

  /** The two kinds, with their path segment and id prefix. */
  public enum Kind {
    VPC_PEERING("vpc-peering", "peering_id", "pcx", "network.vpc_peering"),
    PRIVATE_ENDPOINT("private-endpoint", "endpoint_id", "pep", "network.private_endpoint");

    final String path;
    final String idParam;
    final String prefix;
    final String object;

    Kind(String path, String idParam, String prefix, String object) {
      this.path = path;
      this.idParam = idParam;
      this.prefix = prefix;
      this.object = object;
    }
  }

  /**
   * The lifecycle: {@code pending_acceptance} until the provider side is accepted, then {@code
   * active}; {@code failed} with a reason; {@code deleting} while the provisioner tears it down
   * (the record goes when it has).
   */
  public enum State {
    PENDING_ACCEPTANCE,
    ACTIVE,
    FAILED,
    DELETING;

    public String wireName() {
      return name().toLowerCase(Locale.ROOT);
    }

    static State fromWire(String value) {
      return valueOf(value.toUpperCase(Locale.ROOT));
    }
  }
}
