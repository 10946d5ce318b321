package io.engram.administration;

import io.engram.access.Credential;
import io.engram.access.CredentialKind;
import io.engram.access.CredentialService;
import io.engram.organizations.Organization;
import io.engram.organizations.PlanLimits;
import io.engram.organizations.User;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The JSON the /v1 management routes and the admin CLI return (snake_case, times in Unix seconds,
 * unlimited limits as null). A credential's secret appears only in the creation response.
 */
public final class OrganizationViews {

  private OrganizationViews() {}

  public static Map<String, Object> organization(Organization org) {
    PlanLimits limits = org.plan().limits();
    Map<String, Object> limitView = new LinkedHashMap<>();
    limitView.put("capability_count", limits.capabilityCount());
    limitView.put("requests_per_minute", org.apiRequestsPerMinute());
    limitView.put("concurrent_requests", limits.concurrentRequests());
    limitView.put("tokens_per_request", limits.tokensPerRequest());
    limitView.put("tokens_per_hour", limits.tokensPerHour());
    limitView.put("storage_gb", limits.storageGb());
    limitView.put("connections", limits.connections());
    limitView.put("websocket_connections", limits.webSocketConnections());
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("id", org.id());
    view.put("object", "organization");
    view.put("name", org.name());
    view.put("plan", org.plan().id());
    view.put("tier", org.plan().tier().id());
    view.put("created_at", seconds(org.createdAt()));
    view.put("limits", limitView);
    return view;
  }

  public static Map<String, Object> user(User user) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("id", user.id());
    view.put("object", "organization.user");
    view.put("organization_id", user.orgId());
    view.put("email", user.email());
    view.put("name", user.name());
    view.put("role", user.role().id());
    view.put("created_at", seconds(user.createdAt()));
    return view;
  }

  /** A credential as listed; pass the secret only when answering its creation. */
  public static Map<String, Object> credential(Credential credential, String secret) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("id", credential.id());
    view.put("object", credential.kind().id());
    if (credential.kind() != CredentialKind.ACCOUNT_KEY) {
      view.put("organization_id", credential.orgId());
    }
    view.put("name", credential.name());
    switch (credential.kind()) {
      case CONTEXT_TOKEN -> {
        view.put("scopes", List.copyOf(credential.grants()));
        view.put("agents", credential.agents());
        view.put("end_user_id", credential.endUser());
      }
      case API_KEY -> {
        view.put("permissions", List.copyOf(credential.grants()));
        view.put("rate_limit", credential.rateLimit());
      }
      case ACCOUNT_KEY -> {}
    }
    if (credential.kind() != CredentialKind.ACCOUNT_KEY) {
      view.put("models", credential.models());
    }
    view.put("hint", credential.hint());
    view.put("created_by", credential.createdBy());
    view.put("created_at", seconds(credential.createdAt()));
    view.put("expires_at", seconds(credential.expiresAt()));
    view.put("revoked_at", seconds(credential.revokedAt()));
    view.put("revoked", credential.isRevoked());
    if (secret != null) {
      view.put("token", secret);
    }
    return view;
  }

  /** A just-issued credential, with its secret: the only time the secret is shown. */
  public static Map<String, Object> issued(CredentialService.Issued issued) {
    return credential(issued.credential(), issued.secret());
  }

  public static Map<String, Object> organizations(OrganizationService.Page page) {
    Map<String, Object> view =
        list(page.organizations().stream().map(OrganizationViews::organization).toList());
    view.put("has_more", page.hasMore());
    return view;
  }

  public static Map<String, Object> users(List<User> users) {
    return list(users.stream().map(OrganizationViews::user).toList());
  }

  public static Map<String, Object> credentials(List<Credential> credentials) {
    return list(credentials.stream().map(c -> credential(c, null)).toList());
  }

  private static Map<String, Object> list(List<?> data) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("object", "list");
    view.put("data", data);
    return view;
  }

  private static Long seconds(Instant instant) {
    return instant == null ? null : instant.getEpochSecond();
  }
}
