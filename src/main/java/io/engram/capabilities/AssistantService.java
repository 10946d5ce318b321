package io.engram.capabilities;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.access.Principal;
import io.engram.organizations.Limit;
import io.engram.organizations.Organization;
import io.engram.organizations.UserStore;
import io.engram.platform.Ids;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.EntityTags;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongPredicate;
import java.util.function.Supplier;

/**
 * Assistants and their capability sets, for a caller: every method takes the {@link Principal}
 * and applies {@link AssistantAccess} before anything else, so no route can forget it.
 */
public final class AssistantService {
  /** PostgreSQL lets two writers read one version; the loser re-reads, then builds on the winner or is refused. */
  private static final int MAX_ATTEMPTS = 50;

  private final AssistantStore store;
  private final UserStore users;
  private final CapabilityRegistry registry;
  private volatile CapabilityBridges bridges = CapabilityBridges.NONE;
  private final CapabilitySetValidator validator;
  private final Clock clock;

  public AssistantService(
      AssistantStore store, UserStore users, CapabilityRegistry registry, Clock clock) {
    this.store = store;
    this.users = users;
    this.registry = registry;
    this.validator = new CapabilitySetValidator(registry);
    this.clock = clock;
  }

  public CapabilityRegistry registry() {
    return registry;
  }

  /** A new assistant with only the always-enabled capabilities; its owner is checked here. */
  public Assistant create(
      Principal caller, String name, AssistantType type, String ownerId, String requestId) {
    String owner = switch (type) {
      case ORG_SHARED -> {
        if (ownerId != null) {
          throw ApiException.badRequest(
              "ownerId", "'ownerId' is only for employee_personal assistants");
        }
        if (!AssistantAccess.managesOrganization(caller)) {
          throw ApiException.forbidden(
              "insufficient_permissions",
              "Only owners, admins and API keys with admin create organization-level assistants");
        }
        yield null;
      }
      case EMPLOYEE_PERSONAL -> personalOwner(caller, ownerId);
    };
    Instant now = now();
    Assistant assistant = new Assistant(
        Ids.newId("asst", now.toEpochMilli()),
        caller.orgId(),
        name,
        type,
        owner,
        1,
        CapabilitySet.initial(registry),
        now,
        now);
    store.create(assistant, Actor.of(caller), requestId);
    return assistant;
  }

  private String personalOwner(Principal caller, String ownerId) {
    if (ownerId == null) {
      if (caller.user() == null) {
        throw ApiException.badRequest(
            "ownerId",
            "'ownerId' (a user id of the organization) is required "
                + "when an API key creates an employee_personal assistant");
      }
      return caller.user().id();
    }
    boolean self = caller.user() != null && caller.user().id().equals(ownerId);
    if (!self && !AssistantAccess.managesOrganization(caller)) {
      throw ApiException.forbidden(
          "insufficient_permissions", "Members create personal assistants for themselves only");
    }
    if (users.find(caller.orgId(), ownerId).isEmpty()) {
      throw ApiException.badRequest("ownerId", "No user '" + ownerId + "' in this organization");
    }
    return ownerId;
  }

  public List<Assistant> list(Principal caller, AssistantType type, String afterId, int limit) {
    return store.list(caller.orgId(), AssistantAccess.visibility(caller), type, afterId, limit);
  }

  /** The assistant if the caller may read it; 404 otherwise, so its existence does not leak. */
  public Assistant get(Principal caller, String assistantId) {
    return store
        .find(caller.orgId(), assistantId)
        .filter(assistant -> AssistantAccess.canRead(caller, assistant))
        .orElseThrow(() -> notFound(assistantId));
  }

  /** Renames the assistant; who may change its capabilities may rename it. */
  public Assistant rename(Principal caller, String assistantId, String name) {
    requireModify(caller, get(caller, assistantId));
    if (!store.rename(caller.orgId(), assistantId, name, now())) {
      throw notFound(assistantId);
    }
    return get(caller, assistantId);
  }

  public void delete(Principal caller, String assistantId) {
    requireModify(caller, get(caller, assistantId));
    if (!store.markDeleted(caller.orgId(), assistantId, now())) {
      throw notFound(assistantId);
    }
  }

  /**
   * Replaces the capability set atomically with the change {@code body} describes. {@code ifMatch}
   * (the If-Match header) makes it conditional: a stale version is a 412. Without it the change
   * applies to whatever version is current, and is still one whole set, never a mix of two requests.
   */
  public Assistant replaceCapabilities(
      Principal caller,
      String assistantId,
      Supplier<CapabilityChange> body,
      String ifMatch,
      String requestId) {
    requireModify(caller, get(caller, assistantId));
    // The body is read only once the caller may modify: a stranger learns nothing from a 400.
    CapabilityChange change = body.get();
    LongPredicate accepts = EntityTags.ifMatch(ifMatch);
    Organization org = caller.organization();
    for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      AssistantStore.Replacement outcome = store.replace(
          org.id(),
          assistantId,
          accepts,
          Actor.of(caller),
          requestId,
          current -> current.withCapabilities(
              validator.validate(
                  change.applyTo(current.capabilities(), registry),
                  current.type(),
                  org.plan().tier(),
                  org.plan().limits().capabilityCount()),
              now()));
      switch (outcome) {
        case AssistantStore.Replacement.Done done -> {
          return done.assistant();
        }
        case AssistantStore.Replacement.Missing missing -> throw notFound(assistantId);
        case AssistantStore.Replacement.Stale stale ->
          throw ApiException.preconditionFailed(
              "The assistant's capabilities changed: they are at version " + stale.currentVersion()
                  + " (ETag " + EntityTags.of(stale.currentVersion())
                  + "), not the one If-Match names; read them again and resend");
        case AssistantStore.Replacement.Raced raced -> {
          // Try again on the version that won: If-Match is then checked against it.
        }
      }
    }
    throw ApiException.conflict(
        "concurrent_update",
        "The assistant kept changing while this update was applied; " + "retry it");
  }

  /**
   * Executes a capability of an assistant the caller may use, with the config in force now: the
   * capability must be enabled on the assistant and have a handler (a metadata entry is a 501).
   * The {@code arguments} are read only after those checks, as a PATCH body is.
   */
  public JsonNode execute(
      Principal caller,
      String assistantId,
      String capabilityId,
      Supplier<JsonNode> arguments,
      String requestId) {
    Assistant assistant = get(caller, assistantId);
    Capability capability = registry
        .find(capabilityId)
        .orElseThrow(() -> ApiException.notFound("Capability " + capabilityId + " not found"));
    if (!assistant.capabilities().capabilities().contains(capabilityId)) {
      throw ApiException.forbidden(
          "capability_not_enabled",
          "Capability " + capability.label() + " is not enabled on assistant " + assistantId);
    }
    Optional<CapabilityHandler> handler = registry.handler(capabilityId);
    if (handler.isEmpty() && !bridges.carries(caller.orgId(), capabilityId)) {
      throw ApiException.notImplemented(
          "capability_not_executable",
          "Capability " + capability.label() + " has no handler in this server and no action"
              + " bridge in this organization (POST /api/action-bridges)");
    }
    // Handlers check their arguments themselves here (a config limit is a 403, as this route
    // has always answered); in conversations the executor checks them against the tool's schema.
    JsonNode given = arguments.get();
    ObjectNode config = assistant.capabilities().configs().get(capabilityId);
    if (handler.isEmpty()) {
      return bridges.execute(caller, assistant, capabilityId, config, given, requestId);
    }
    return handler
        .get()
        .execute(new CapabilityHandler.Invocation(
            caller.orgId(), caller, null, assistantId, config, given, now(), null, null));
  }

  /**
   * Whether the organization can execute the capability: a built-in handler, or its own action
   * bridge (the registry listing and the execute route say the same).
   */
  public boolean executable(String orgId, Capability capability) {
    return capability.executable() || (orgId != null && bridges.carries(orgId, capability.id()));
  }

  /** Where capabilities without a built-in handler are carried out (the actions module's bridges). */
  public void carryOutWith(CapabilityBridges bridges) {
    this.bridges = bridges;
  }

  /** Newest first, before {@code beforeVersion} (exclusive); each with the set it replaced. */
  public List<CapabilityVersion> history(
      Principal caller, String assistantId, long beforeVersion, int limit) {
    get(caller, assistantId);
    return store.versions(assistantId, beforeVersion, limit);
  }

  /** The set in force at {@code at} for the caller's view of the assistant. */
  public CapabilityVersion inForceAt(Principal caller, String assistantId, Instant at) {
    Assistant assistant = get(caller, assistantId);
    return store
        .inForceAt(assistant.id(), at)
        .orElseThrow(() -> ApiException.notFound("Assistant " + assistantId + " did not exist at "
            + at + "; it was created at " + assistant.createdAt()));
  }

  /**
   * For a conversation as an assistant: the capability-set version in force when the message
   * arrived, for an assistant the caller may read (404 otherwise), so a change made while a
   * conversation runs applies from the next message on.
   */
  public CapabilityVersion versionForMessage(
      Principal caller, String assistantId, Instant messageArrivedAt) {
    return inForceAt(caller, assistantId, messageArrivedAt);
  }

  /**
   * The set an assistant of the organization had at {@code at}, whoever asks (an approval decided
   * by the operator); empty for an assistant the organization does not have or that was deleted.
   */
  public Optional<CapabilityVersion> versionAt(String orgId, String assistantId, Instant at) {
    return store.find(orgId, assistantId).flatMap(a -> store.inForceAt(a.id(), at));
  }

  /**
   * After the organization's plan changed: every assistant keeps only what the new plan allows.
   * Capabilities above its tier are disabled, then, past its capability count, the last enabled
   * ones (the always-enabled ones stay). Each change is a new version by the {@code system}
   * actor, so the history says what was taken away and when; nothing changes on an upgrade.
   *
   * @return how many assistants changed
   */
  public int fitToPlan(Organization org, String requestId) {
    Actor system = new Actor("system", null, null);
    int changed = 0;
    String after = null;
    List<Assistant> page;
    do {
      page = store.list(org.id(), AssistantStore.Visibility.ALL, null, after, 200);
      for (Assistant assistant : page) {
        if (fitted(assistant.capabilities(), org).equals(assistant.capabilities())) {
          continue;
        }
        AssistantStore.Replacement outcome = store.replace(
            org.id(),
            assistant.id(),
            null,
            system,
            requestId,
            current -> current.withCapabilities(fitted(current.capabilities(), org), now()));
        if (outcome instanceof AssistantStore.Replacement.Done) {
          changed++;
        }
      }
      after = page.isEmpty() ? after : page.getLast().id();
    } while (page.size() == 200);
    return changed;
  }

  private CapabilitySet fitted(CapabilitySet set, Organization org) {
    List<String> kept = new ArrayList<>();
    for (String id : set.capabilities()) {
      Capability capability = registry.find(id).orElse(null);
      if (capability != null
          && (capability.alwaysEnabled()
              || capability.tierRequirement().compareTo(org.plan().tier()) <= 0)) {
        kept.add(id);
      }
    }
    Limit limit = org.plan().limits().capabilityCount();
    while (!limit.isUnlimited() && kept.size() > limit.value()) {
      String last = kept.reversed().stream()
          .filter(id -> registry.find(id).map(c -> !c.alwaysEnabled()).orElse(true))
          .findFirst()
          .orElse(null);
      if (last == null) {
        break;
      }
      kept.remove(last);
    }
    Map<String, ObjectNode> configs = new LinkedHashMap<>();
    kept.forEach(id -> configs.put(id, set.configs().get(id)));
    return new CapabilitySet(kept, configs);
  }

  /** Times are stored in milliseconds; the responses show what was stored. */
  private Instant now() {
    return clock.instant().truncatedTo(ChronoUnit.MILLIS);
  }

  private static void requireModify(Principal caller, Assistant assistant) {
    if (!AssistantAccess.canModify(caller, assistant)) {
      throw ApiException.forbidden(
          "insufficient_permissions",
          "You may read this assistant but not modify it: "
              + "changes need an owner or admin, the owner of a personal assistant, or an API key with admin");
    }
  }

  static ApiException notFound(String assistantId) {
    return ApiException.notFound("Assistant " + assistantId + " not found");
  }
}
