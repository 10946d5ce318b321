package io.engram.guardrails;

import io.engram.access.ManagedOrganization;
import io.engram.access.Requires;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.javalin.http.Context;
import java.util.Map;

/**
 * An organization's guardrails: {@code /v1/organizations/{org_id}/guardrails} (create, list) and
 * {@code …/guardrails/{guardrail_id}} (read, patch, delete). Owners and admins write; members read;
 * another organization's credential gets 404.
 */
final class GuardrailRoutes implements RouteModule {
  private static final String GUARDRAILS = "/v1/organizations/{org_id}/guardrails";
  private static final String ONE = GUARDRAILS + "/{guardrail_id}";

  private final Guardrails guardrails;
  private final long maxBodyBytes;

  GuardrailRoutes(Guardrails guardrails, long maxBodyBytes) {
    this.guardrails = guardrails;
    this.maxBodyBytes = maxBodyBytes;
  }

  @Override
  public void register(Routes routes) {
    routes.exposeHeaders(Guardrails.HEADER);
    // A memory write's response tells what fired on it, as a model call's does.
    routes.before(ctx -> {
      java.util.List<Screening.Firing> told = new java.util.ArrayList<>();
      Guardrails.tellTo(fired -> {
        told.addAll(fired);
        ctx.header(Guardrails.HEADER, Screening.told(told));
      });
    });
    routes.after(ctx -> Guardrails.tellTo(null));
    routes
        .post(GUARDRAILS, Requires.organizationAdmin(), this::create)
        .post(GUARDRAILS + "/preview", Requires.organizationMember(), this::preview)
        .get(
            GUARDRAILS,
            Requires.organizationMember(),
            ctx -> Responses.json(
                ctx,
                Map.of(
                    "object",
                    "list",
                    "data",
                    guardrails.list(orgId(ctx)).stream()
                        .map(GuardrailViews::view)
                        .toList())))
        .get(
            ONE,
            Requires.organizationMember(),
            ctx -> Responses.json(
                ctx,
                GuardrailViews.view(guardrails.get(orgId(ctx), ctx.pathParam("guardrail_id")))))
        .patch(
            ONE,
            Requires.organizationAdmin(),
            ctx -> Responses.json(
                ctx,
                GuardrailViews.view(guardrails.update(
                    orgId(ctx),
                    ctx.pathParam("guardrail_id"),
                    JsonBody.parseMergePatch(ctx, maxBodyBytes)))))
        .delete(ONE, Requires.organizationAdmin(), ctx -> {
          guardrails.delete(orgId(ctx), ctx.pathParam("guardrail_id"));
          ctx.status(204);
        });
  }

  private void create(Context ctx) {
    String orgId = orgId(ctx);
    GuardrailSpec spec = GuardrailSpec.parse(JsonBody.parse(ctx, maxBodyBytes).node());
    Responses.json(ctx, 201, GuardrailViews.view(guardrails.create(orgId, spec)));
  }

  /**
   * What the organization's guardrails would make of a text (the console's "try a text"): each
   * that fires with the kinds it found, the one that blocks, and the text as it would go on. Runs
   * the guardrails of one phase, or of every phase; nothing is counted or told.
   */
  private void preview(Context ctx) {
    String orgId = orgId(ctx);
    com.fasterxml.jackson.databind.node.ObjectNode body =
        JsonBody.parse(ctx, maxBodyBytes).node();
    com.fasterxml.jackson.databind.JsonNode text = body.get("text");
    if (text == null || !text.isTextual()) {
      throw io.engram.platform.http.ApiException.badRequest("text", "'text' is required: a string");
    }
    com.fasterxml.jackson.databind.JsonNode phase = body.get("phase");
    java.util.Optional<Phase> only = phase == null || phase.isNull()
        ? java.util.Optional.empty()
        : Phase.fromId(phase.asText()).or(() -> {
          throw io.engram.platform.http.ApiException.badRequest(
              "phase", "'phase' is input, output, memory_write or memory_injection");
        });
    Responses.json(ctx, GuardrailViews.preview(guardrails.preview(orgId, only, text.asText())));
  }

  /** The path's organization, found (404 when it does not exist, for the operator too). */
  private static String orgId(Context ctx) {
    return ManagedOrganization.of(ctx).orgId();
  }
}
