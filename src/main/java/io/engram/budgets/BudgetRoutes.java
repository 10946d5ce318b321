package io.engram.budgets;

import io.engram.access.ManagedOrganization;
import io.engram.access.Requires;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.javalin.http.Context;
import java.util.Map;
import java.util.Set;

/**
 * An organization's budgets in money, for the operator or an admin of the organization: {@code
 * /v1/organizations/{org_id}/budgets} (create, list), {@code …/budgets/{budget_id}} (read,
 * delete). Amounts are US dollars, the unit of the models' prices.
 */
final class BudgetRoutes implements RouteModule {
  private static final String BUDGETS = "/v1/organizations/{org_id}/budgets";

  private final Budgets budgets;
  private final long maxBodyBytes;

  BudgetRoutes(Budgets budgets, long maxBodyBytes) {
    this.budgets = budgets;
    this.maxBodyBytes = maxBodyBytes;
  }

  @Override
  public void register(Routes routes) {
    routes
        .post(BUDGETS, Requires.organizationAdmin(), this::create)
        .get(
            BUDGETS,
            Requires.organizationAdmin(),
            ctx -> Responses.json(
                ctx,
                Map.of(
                    "object",
                    "list",
                    "data",
                    budgets.standings(managed(ctx).orgId()).stream()
                        .map(BudgetViews::view)
                        .toList())))
        .get(
            BUDGETS + "/{budget_id}",
            Requires.organizationAdmin(),
            ctx -> Responses.json(
                ctx,
                BudgetViews.view(budgets.get(managed(ctx).orgId(), ctx.pathParam("budget_id")))))
        .delete(BUDGETS + "/{budget_id}", Requires.organizationAdmin(), ctx -> {
          budgets.delete(managed(ctx).orgId(), ctx.pathParam("budget_id"));
          ctx.status(204);
        });
  }

  private void create(Context ctx) {
    ManagedOrganization managed = managed(ctx);
    JsonBody body = JsonBody.parse(ctx, maxBodyBytes);
    body.allowOnly(Set.of("scope", "scope_id", "period", "limit", "currency"));
    String scopeName = body.requiredString("scope", 32);
    Budget.Scope scope = Budget.Scope.fromId(scopeName)
        .orElseThrow(() -> ApiException.badRequest(
            "scope", "'scope' is organization, key or assistant, not '" + scopeName + "'"));
    String periodName = body.requiredString("period", 32);
    Budget.Period period = Budget.Period.fromId(periodName)
        .orElseThrow(() -> ApiException.badRequest(
            "period", "'period' is day or month (UTC), not '" + periodName + "'"));
    double limit = body.optionalNumber("limit", 0, Money.number(Budgets.MAX_LIMIT_NANOS))
        .orElseThrow(() -> ApiException.badRequest("limit", "'limit' is required: US dollars"));
    body.optionalString("currency", 8).ifPresent(currency -> {
      if (!currency.equals(BudgetViews.CURRENCY)) {
        throw ApiException.badRequest(
            "currency",
            "Budgets are in US dollars, the unit of the models' prices: 'currency' is USD, not '"
                + currency + "'");
      }
    });
    Budget created = budgets.create(
        managed.orgId(),
        scope,
        body.optionalString("scope_id", 128).orElse(null),
        period,
        Money.nanos(limit),
        managed.principal().credentialId());
    Responses.json(ctx, 201, BudgetViews.view(budgets.get(managed.orgId(), created.id())));
  }

  private ManagedOrganization managed(Context ctx) {
    return ManagedOrganization.of(ctx);
  }
}
