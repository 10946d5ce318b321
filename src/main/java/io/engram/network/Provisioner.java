package io.engram.network;

import java.util.Map;

/**
 * Carries VPC peerings and private endpoints out on the cloud side. The routes and records do
 * not know how: they hand each new request and each deletion to the provisioner, and state
 * changes come back through {@link NetworkLinks#accept} and {@link NetworkLinks#fail}. The
 * built-in {@link ManualProvisioner} leaves the cloud work to the operator; a provisioner that
 * calls a cloud's API implements this interface and is chosen in {@code Network}, with no change
 * to the routes (docs/network.md, "Provisioners").
 */
public interface Provisioner {

  /**
   * A new request, already validated and stored as {@code pending_acceptance}: start the cloud
   * work. Returns what the customer is told to do meanwhile (shown as {@code instructions}).
   */
  Map<String, Object> requested(NetworkLink link);

  /**
   * The organization deleted the record: tear the cloud side down. True when it is gone now (the
   * record is removed at once); false when teardown continues (the record stays {@code deleting}
   * until the provisioner calls {@link NetworkLinks#release}).
   */
  boolean release(NetworkLink link);
}
