package io.engram.organizations;

import io.engram.access.CredentialKind;
import io.engram.access.Guard;
import io.engram.access.Principal;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.javalin.http.Context;

/**
 * /v1 management routes: organizations and their users, context tokens and API keys (for the
 * operator or an organization's admin API key), and account keys (operator only).
 */
public final class OrganizationRoutes implements RouteModule {
  private static final String ORG = "/v1/organizations/{org_id}";

  private final OrganizationApi api;
  private final Guard guard;
  private final long maxBodyBytes;

  public OrganizationRoutes(OrganizationApi api, Guard guard, long maxBodyBytes) {
    this.api = api;
    this.guard = guard;
    this.maxBodyBytes = maxBodyBytes;
  }

  @Override
  public void register(Routes routes) {
    routes.post("/v1/organizations", this::createOrganization)
        .get("/v1/organizations", this::listOrganizations)
        .get(ORG, ctx -> Responses.json(ctx, api.getOrganization(adminOf(ctx).orgId)))
        .post(ORG + "/users", ctx -> {
          String orgId = adminOf(ctx).orgId;
          Responses.json(ctx, 201, api.createUser(orgId, body(ctx)));
        })
        .get(ORG + "/users", ctx -> Responses.json(ctx, api.listUsers(adminOf(ctx).orgId)))
        .post(ORG + "/tokens", ctx -> {
          Admin admin = adminOf(ctx);
          Responses.json(ctx, 201, api.createToken(admin.orgId, body(ctx), admin.principal.credentialId()));
        })
        .get(ORG + "/tokens", ctx ->
            Responses.json(ctx, api.listCredentials(CredentialKind.CONTEXT_TOKEN, adminOf(ctx).orgId)))
        .delete(ORG + "/tokens/{token_id}", ctx -> Responses.json(ctx,
            api.revokeCredential(CredentialKind.CONTEXT_TOKEN, adminOf(ctx).orgId, ctx.pathParam("token_id"))))
        .post(ORG + "/api-keys", ctx -> {
          Admin admin = adminOf(ctx);
          Responses.json(ctx, 201, api.createApiKey(admin.orgId, body(ctx), admin.principal.credentialId()));
        })
        .get(ORG + "/api-keys", ctx ->
            Responses.json(ctx, api.listCredentials(CredentialKind.API_KEY, adminOf(ctx).orgId)))
        .delete(ORG + "/api-keys/{key_id}", ctx -> Responses.json(ctx,
            api.revokeCredential(CredentialKind.API_KEY, adminOf(ctx).orgId, ctx.pathParam("key_id"))))
        .post("/v1/account/keys", ctx -> {
          Principal operator = guard.account(ctx);
          Responses.json(ctx, 201, api.createAccountKey(body(ctx), operator.credentialId()));
        })
        .get("/v1/account/keys", ctx -> {
          guard.account(ctx);
          Responses.json(ctx, api.listCredentials(CredentialKind.ACCOUNT_KEY, null));
        })
        .delete("/v1/account/keys/{key_id}", ctx -> {
          guard.account(ctx);
          Responses.json(ctx, api.revokeCredential(CredentialKind.ACCOUNT_KEY, null, ctx.pathParam("key_id")));
        });
  }

  private void createOrganization(Context ctx) {
    guard.account(ctx);
    Responses.json(ctx, 201, api.createOrganization(body(ctx)));
  }

  private void listOrganizations(Context ctx) {
    guard.account(ctx);
    int limit = parseLimit(ctx.queryParam("limit"));
    Responses.json(ctx, api.listOrganizations(ctx.queryParam("after"), limit));
  }

  private static int parseLimit(String raw) {
    if (raw == null) {
      return 100;
    }
    try {
      int limit = Integer.parseInt(raw);
      if (limit >= 1 && limit <= 1000) {
        return limit;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw ApiException.badRequest("limit", "'limit' must be an integer between 1 and 1000");
  }

  private record Admin(Principal principal, String orgId) {
  }

  private Admin adminOf(Context ctx) {
    String orgId = ctx.pathParam("org_id");
    return new Admin(guard.organizationAdmin(ctx, orgId), orgId);
  }

  private JsonBody body(Context ctx) {
    return JsonBody.parse(ctx, maxBodyBytes);
  }
}
