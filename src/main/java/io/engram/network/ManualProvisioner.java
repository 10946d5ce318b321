package io.engram.network;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The built-in provisioner: the operator does the cloud side by hand and then accepts (or fails)
 * the request with {@code POST /v1/admin/network/requests/{id}/accept} ({@code /fail}), adding
 * what the customer needs (the peering connection id to accept, the endpoint service name).
 * Until then the record tells the customer what happens next.
 */
public final class ManualProvisioner implements Provisioner {
  /** Engram's side of a peering: the range the spec reserves (routes to it go over the peering). */
  static final String ENGRAM_CIDR = "10.0.0.0/8";

  @Override
  public Map<String, Object> requested(NetworkLink link) {
    Map<String, Object> steps = new LinkedHashMap<>();
    steps.put("provisioner", "manual");
    if (link.kind() == NetworkLink.Kind.VPC_PEERING) {
      steps.put("engram_cidr", ENGRAM_CIDR);
      steps.put(
          "next_step",
          "The operator creates a peering connection from Engram's network to your VPC "
              + link.request().path("vpc_id").asText() + " in account "
              + link.request().path("account_id").asText() + ". When it is accepted here, the "
              + "record shows its peering_connection_id: accept that connection in your "
              + link.provider() + " console and route " + ENGRAM_CIDR + " through it.");
    } else {
      steps.put(
          "next_step",
          "The operator publishes Engram's endpoint service for your VPC "
              + link.request().path("vpc_id").asText() + ". When it is accepted here, the record "
              + "shows its service_name: create an interface endpoint to it in the listed subnets "
              + "with the listed security groups.");
    }
    return steps;
  }

  @Override
  public boolean release(NetworkLink link) {
    return true; // the operator removes the cloud side; nothing here waits for it
  }
}
