package io.engram;

import io.engram.access.CredentialKind;
import io.engram.access.CredentialService;
import io.engram.access.CredentialStore;
import io.engram.access.SessionService;
import io.engram.access.SessionStore;
import io.engram.actions.MemoryHandlers;
import io.engram.actions.Reminders;
import io.engram.administration.OrganizationService;
import io.engram.capabilities.AssistantService;
import io.engram.capabilities.AssistantStore;
import io.engram.capabilities.CapabilityHandler;
import io.engram.capabilities.CapabilityRegistry;
import io.engram.capabilities.OrganizationAnalytics;
import io.engram.organizations.AuditLog;
import io.engram.organizations.OrganizationStore;
import io.engram.organizations.UserStore;
import io.engram.platform.cluster.Cluster;
import io.engram.platform.config.EngramConfig;
import io.engram.platform.crypto.SecretBox;
import io.engram.settings.OrganizationConfigs;
import io.engram.settings.SystemDefaults;
import io.engram.store.Database;
import io.engram.store.Databases;
import io.engram.store.SecretKeys;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The stores and services both the server and the admin CLI use. */
public record Services(
    Database database,
    OrganizationStore organizations,
    UserStore users,
    CredentialService credentials,
    SessionService sessions,
    OrganizationService organizationService,
    AssistantService assistants,
    OrganizationConfigs configs,
    AuditLog audit,
    SecretBox secrets,
    MemoryHandlers memoryHandlers,
    Reminders reminders,
    Cluster cluster)
    implements AutoCloseable {

  public static Services open(EngramConfig config, Clock clock) {
    Database database = Databases.open(config);
    OrganizationStore organizations = new OrganizationStore(database);
    UserStore users = new UserStore(database);
    Cluster cluster = Cluster.open(config.cluster().redisUrl());
    CredentialService credentials = new CredentialService(
        new CredentialStore(database),
        organizations,
        clock,
        config.access().adminKey(),
        cluster.bus());
    SessionService sessions = new SessionService(
        new SessionStore(database),
        users,
        organizations,
        clock,
        Duration.ofMinutes(config.access().sessionTtlMinutes()));
    OrganizationService administration =
        new OrganizationService(organizations, users, credentials, clock);
    MemoryHandlers memoryHandlers = new MemoryHandlers();
    Reminders reminders = new Reminders(database, clock);
    List<CapabilityHandler> handlers = new ArrayList<>(memoryHandlers.handlers());
    handlers.addAll(reminders.handlers());
    handlers.add(new OrganizationAnalytics(database));
    AssistantService assistants = new AssistantService(
        new AssistantStore(database), users, CapabilityRegistry.load(handlers), clock);
    // A lower plan allows fewer capabilities: each assistant is fitted to it, in its history.
    administration.onPlanChange((before, after, requestId) ->
        Map.of("assistants_changed", assistants.fitToPlan(after, requestId)));
    SecretBox secrets = SecretKeys.open(config.storage(), database);
    return new Services(
        database,
        organizations,
        users,
        credentials,
        sessions,
        administration,
        assistants,
        new OrganizationConfigs(database, SystemDefaults.of(config), secrets, clock),
        new AuditLog(database),
        secrets,
        memoryHandlers,
        reminders,
        cluster);
  }

  /** Whether the organization holds this API key or context token (a budget's key scope). */
  public boolean holdsCredential(String orgId, String id) {
    return credentials.find(CredentialKind.API_KEY, orgId, id).isPresent()
        || credentials.find(CredentialKind.CONTEXT_TOKEN, orgId, id).isPresent();
  }

  @Override
  public void close() {
    cluster.close();
    database.close();
  }
}
