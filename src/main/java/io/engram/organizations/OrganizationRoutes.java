package io.engram.organizations;

import io.engram.access.CredentialKind;
import io.engram.access.Guard;
import io.engram.access.Principal;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.QueryParams;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.javalin.http.Context;
import java.util.Map;

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
        .get(ORG + "/users", ctx -> Responses.json(ctx, api.listUsers(adminOf(ctx).orgId)));
    credentialRoutes(routes, "tokens", "token_id", CredentialKind.CONTEXT_TOKEN, api::createToken);
    credentialRoutes(routes, "api-keys", "key_id", CredentialKind.API_KEY, api::createApiKey);
    routes.post("/v1/account/keys", ctx -> {
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

  /** How a credential of one kind is created from its route's body. */
  @FunctionalInterface
  private interface CredentialCreator {
    Map<String, Object> create(String orgId, JsonBody body, String createdBy);
  }

  /** Create, list and revoke routes of one credential collection of an organization. */
  private void credentialRoutes(Routes routes, String collection, String idParam, CredentialKind kind,
                                CredentialCreator creator) {
    String path = ORG + "/" + collection;
    routes.post(path, ctx -> {
          Admin admin = adminOf(ctx);
          Responses.json(ctx, 201, creator.create(admin.orgId, body(ctx), admin.principal.credentialId()));
        })
        .get(path, ctx -> Responses.json(ctx, api.listCredentials(kind, adminOf(ctx).orgId)))
        .delete(path + "/{" + idParam + "}", ctx ->
            Responses.json(ctx, api.revokeCredential(kind, adminOf(ctx).orgId, ctx.pathParam(idParam))));
  }

  private void createOrganization(Context ctx) {
    guard.account(ctx);
    Responses.json(ctx, 201, api.createOrganization(body(ctx)));
  }

  private void listOrganizations(Context ctx) {
    guard.account(ctx);
    int limit = QueryParams.integer(ctx, "limit", 100, 1, 1000);
    Responses.json(ctx, api.listOrganizations(ctx.queryParam("after"), limit));
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
