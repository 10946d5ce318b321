package io.engram.inference.routing;

/**
 * Where a provider that refused the gateway's key or a deployment's model is told (the
 * organization's alerts): an operator problem no retry cures. Told again when the deployment
 * answers the organization after that.
 */
public interface ProviderAlerts {
  ProviderAlerts NONE = (orgId, misconfigured, message) -> {};

  void report(String orgId, boolean misconfigured, String message);
}
