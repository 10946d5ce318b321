package io.engram.instances;

import io.engram.instances.storage.StoragePath;
import io.engram.instances.storage.StoragePermissions;
import io.engram.organizations.InstanceStore;
import io.engram.organizations.User;
import io.engram.organizations.UserStore;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.javalin.http.Context;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * {@code POST /v1/nano/{nano_id}/storage/permissions} {path, permissions, users}: what the
 * organization's signed-in users may do with a path of the instance's storage (enforced by the
 * file API); {@code GET} lists the rules. The operator or an admin API key sets them.
 */
final class PermissionRoutes implements RouteModule {
  private static final String PERMISSIONS = "/v1/nano/{nano_id}/storage/permissions";
  private static final int MAX_USERS = 100;

  private final StoragePermissions permissions;
  private final UserStore users;
  private final InstanceStore instances;
  private final long maxBodyBytes;

  PermissionRoutes(
      StoragePermissions permissions, UserStore users, InstanceStore instances, long maxBodyBytes) {
    this.permissions = permissions;
    this.users = users;
    this.instances = instances;
    this.maxBodyBytes = maxBodyBytes;
  }

  @Override
  public void register(Routes routes) {
    routes
        .get(
            PERMISSIONS,
            InstanceAccess.admin(instances),
            ctx -> Responses.json(ctx, view(access(ctx).instanceId())))
        .post(PERMISSIONS, InstanceAccess.admin(instances), this::set);
  }

  private void set(Context ctx) {
    InstanceAccess access = access(ctx);
    JsonBody body = JsonBody.parse(ctx, maxBodyBytes);
    body.allowOnly(Set.of("path", "permissions", "users"));
    String path = body.requiredString("path", StoragePath.MAX_BYTES);
    // A folder rule ("data/reports/") or a file's; checked as a path either way.
    StoragePath.of(path.endsWith("/") ? path + "x" : path, "path");
    StoragePermissions.Access granted =
        StoragePermissions.Access.of(body.requiredString("permissions", 20));
    List<String> emails = body.optionalStringList("users", MAX_USERS, 320)
        .filter(list -> !list.isEmpty())
        .orElseThrow(() -> ApiException.badRequest(
            "users", "'users' lists the emails of the organization's users, at least one"));
    Map<String, User> byEmail = new LinkedHashMap<>();
    users
        .list(access.orgId())
        .forEach(user -> byEmail.put(user.email().toLowerCase(Locale.ROOT), user));
    List<User> named = new ArrayList<>();
    for (int i = 0; i < emails.size(); i++) {
      User user = byEmail.get(emails.get(i).strip().toLowerCase(Locale.ROOT));
      if (user == null) {
        throw ApiException.badRequest(
            "users[" + i + "]", emails.get(i) + " is not a user of this organization");
      }
      named.add(user);
    }
    permissions.set(
        access.orgId(),
        access.instanceId(),
        path,
        granted,
        named,
        access.principal().credentialId());
    Responses.json(ctx, view(access.instanceId()));
  }

  private Map<String, Object> view(String instanceId) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("object", "storage.permissions");
    view.put("instance_id", instanceId);
    view.put(
        "data",
        permissions.list(instanceId).stream()
            .map(rule -> {
              Map<String, Object> line = new LinkedHashMap<>();
              line.put("path", rule.path());
              line.put("user", rule.email());
              line.put("permissions", rule.access().wireName());
              return line;
            })
            .toList());
    return view;
  }

  private InstanceAccess access(Context ctx) {
    return InstanceAccess.of(ctx);
  }
}
