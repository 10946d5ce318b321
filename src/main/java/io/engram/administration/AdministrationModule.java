package io.engram.administration;

import io.engram.organizations.AuditLog;
import io.engram.platform.http.Routes;
import io.engram.platform.module.Module;
import io.engram.settings.OrganizationConfigs;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Organizations as the operator and their admins manage them: the organizations and their keys,
 * their configuration and environment variables, with what each holds open now beside its limits.
 */
public final class AdministrationModule implements Module {
  private final OrganizationService organizations;
  private final OrganizationConfigs configs;
  private final AuditLog audit;
  private final long maxBodyBytes;
  private final List<InUse> inUse = new CopyOnWriteArrayList<>();

  public AdministrationModule(
      OrganizationService organizations,
      OrganizationConfigs configs,
      AuditLog audit,
      long maxBodyBytes) {
    this.organizations = organizations;
    this.configs = configs;
    this.audit = audit;
    this.maxBodyBytes = maxBodyBytes;
  }

  /** Adds what a domain holds open to the configuration route's {@code in_use}. */
  public AdministrationModule countInUse(InUse source) {
    inUse.add(source);
    return this;
  }

  private Map<String, Integer> inUse(String orgId) {
    Map<String, Integer> counts = new LinkedHashMap<>();
    inUse.forEach(source -> counts.putAll(source.of(orgId)));
    return counts;
  }

  @Override
  public String name() {
    return "administration";
  }

  @Override
  public void register(Routes routes) {
    new OrganizationRoutes(organizations, maxBodyBytes).register(routes);
    new EnvRoutes(configs, organizations, maxBodyBytes).register(routes);
    new ConfigRoutes(configs, organizations, audit, this::inUse, maxBodyBytes).register(routes);
  }
}
