package io.engram.administration;

import io.engram.access.Access;
import io.engram.access.CredentialKind;
import io.engram.access.CredentialService;
import io.engram.access.ManagedOrganization;
import io.engram.access.Principal;
import io.engram.access.Requires;
import io.engram.organizations.Role;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.HttpServer;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.QueryParams;
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

  private final OrganizationService organizations;
  private final long maxBodyBytes;

  public OrganizationRoutes(OrganizationService organizations, long maxBodyBytes) {
    this.organizations = organizations;
    this.maxBodyBytes = maxBodyBytes;
  }

  @Override
  public void register(Routes routes) {
    routes
        .post("/v1/organizations", Requires.account(), this::createOrganization)
        .get("/v1/organizations", Requires.account(), this::listOrganizations)
        .get(
            ORG,
            Requires.organizationAdmin(),
            ctx -> Responses.json(
                ctx, OrganizationViews.organization(organizations.get(adminOf(ctx).orgId))))
        .patch(ORG, Requires.account(), ctx -> {
          Principal operator = Access.caller(ctx);
          organizations.get(ctx.pathParam("org_id")); // 404 before the body is looked at
          var changed = organizations.change(
              ctx.pathParam("org_id"),
              OrganizationRequests.organizationChange(JsonBody.parseMergePatch(ctx, maxBodyBytes)),
              operator.credentialId(),
              HttpServer.requestId(ctx));
          var view = OrganizationViews.organization(changed.organization());
          view.put("consequences", changed.consequences());
          Responses.json(ctx, view);
        })
        .post(ORG + "/users", Requires.organizationAdmin(), ctx -> {
          String orgId = adminOf(ctx).orgId;
          var user = organizations.createUser(orgId, OrganizationRequests.user(body(ctx)));
          Responses.json(ctx, 201, OrganizationViews.user(user));
        })
        .get(
            ORG + "/users",
            Requires.organizationAdmin(),
            ctx -> Responses.json(
                ctx, OrganizationViews.users(organizations.users(adminOf(ctx).orgId))))
        .patch(ORG + "/users/{user_id}", Requires.organizationAdmin(), ctx -> {
          Admin admin = adminOf(ctx);
          Role role = OrganizationRequests.roleChange(body(ctx));
          Responses.json(
              ctx,
              OrganizationViews.user(organizations.changeRole(
                  admin.principal(), admin.orgId, ctx.pathParam("user_id"), role)));
        });
    credentialRoutes(
        routes,
        "tokens",
        "token_id",
        CredentialKind.CONTEXT_TOKEN,
        (orgId, body, createdBy) ->
            organizations.createToken(orgId, OrganizationRequests.token(body), createdBy));
    credentialRoutes(
        routes,
        "api-keys",
        "key_id",
        CredentialKind.API_KEY,
        (orgId, body, createdBy) ->
            organizations.createApiKey(orgId, OrganizationRequests.apiKey(body), createdBy));
    routes
        .post("/v1/account/keys", Requires.account(), ctx -> {
          Principal operator = Access.caller(ctx);
          var issued = organizations.createAccountKey(
              OrganizationRequests.accountKey(body(ctx)), operator.credentialId());
          Responses.json(ctx, 201, OrganizationViews.issued(issued));
        })
        .get("/v1/account/keys", Requires.account(), ctx -> {
          Responses.json(
              ctx,
              OrganizationViews.credentials(
                  organizations.credentials(CredentialKind.ACCOUNT_KEY, null)));
        })
        .delete("/v1/account/keys/{key_id}", Requires.account(), ctx -> {
          var revoked =
              organizations.revoke(CredentialKind.ACCOUNT_KEY, null, ctx.pathParam("key_id"));
          Responses.json(ctx, OrganizationViews.credential(revoked, null));
        });
  }

  /** How a credential of one kind is issued from its route's body. */
  @FunctionalInterface
  private interface CredentialIssuer {
    CredentialService.Issued issue(String orgId, JsonBody body, String createdBy);
  }

  /** Create, list and revoke routes of one credential collection of an organization. */
  private void credentialRoutes(
      Routes routes,
      String collection,
      String idParam,
      CredentialKind kind,
      CredentialIssuer issuer) {
    String path = ORG + "/" + collection;
    routes
        .post(path, Requires.organizationAdmin(), ctx -> {
          Admin admin = adminOf(ctx);
          if (kind == CredentialKind.API_KEY
              && admin.principal.kind() != Principal.Kind.ACCOUNT
              && admin.principal.kind() != Principal.Kind.SESSION) {
            // The spec: "Creating keys by API needs an account-level key", and the dashboard
            // (a signed-in owner or admin) creates them too. An admin key that could mint keys
            // would make any leaked admin key a permanent foothold.
            throw ApiException.forbidden(
                "account_key_required",
                "Creating API keys needs an account-level key or a signed-in owner or admin; this "
                    + "organization's admin key may list and revoke its keys");
          }
          var issued = issuer.issue(admin.orgId, body(ctx), admin.principal.credentialId());
          Responses.json(ctx, 201, OrganizationViews.issued(issued));
        })
        .get(
            path,
            Requires.organizationAdmin(),
            ctx -> Responses.json(
                ctx,
                OrganizationViews.credentials(organizations.credentials(kind, adminOf(ctx).orgId))))
        .delete(path + "/{" + idParam + "}", Requires.organizationAdmin(), ctx -> {
          var revoked = organizations.revoke(kind, adminOf(ctx).orgId, ctx.pathParam(idParam));
          Responses.json(ctx, OrganizationViews.credential(revoked, null));
        });
  }

  private void createOrganization(Context ctx) {
    var org = organizations.create(OrganizationRequests.organization(body(ctx)));
    Responses.json(ctx, 201, OrganizationViews.organization(org));
  }

  private void listOrganizations(Context ctx) {
    int limit = QueryParams.integer(ctx, "limit", 100, 1, 1000);
    Responses.json(
        ctx, OrganizationViews.organizations(organizations.list(ctx.queryParam("after"), limit)));
  }

  private record Admin(Principal principal, String orgId) {}

  private Admin adminOf(Context ctx) {
    ManagedOrganization managed = ManagedOrganization.of(ctx);
    return new Admin(managed.principal(), managed.orgId());
  }

  private JsonBody body(Context ctx) {
    return JsonBody.parse(ctx, maxBodyBytes);
  }
}
