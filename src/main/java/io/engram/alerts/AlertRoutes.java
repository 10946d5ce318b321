package io.engram.alerts;

import io.engram.access.ManagedOrganization;
import io.engram.access.Requires;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.QueryParams;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.javalin.http.Context;
import java.time.Clock;
import java.util.Locale;
import java.util.Set;

/**
 * An organization's alerts (active and history) and its alert channels, for the operator or an
 * admin API key of the organization: {@code /alerts}, {@code /alert-channels} (webhooks), a
 * channel's delivery log and a test send.
 */
public final class AlertRoutes implements RouteModule {
  private static final String ORG = "/v1/organizations/{org_id}";

  private final AlertStore alerts;
  private final AlertChannels channels;
  private final WebhookSender sender;
  private final Clock clock;
  private final long maxBodyBytes;

  public AlertRoutes(
      AlertStore alerts,
      AlertChannels channels,
      WebhookSender sender,
      Clock clock,
      long maxBodyBytes) {
    this.alerts = alerts;
    this.channels = channels;
    this.sender = sender;
    this.clock = clock;
    this.maxBodyBytes = maxBodyBytes;
  }

  @Override
  public void register(Routes routes) {
    routes
        .get(ORG + "/alerts", Requires.organizationAdmin(), this::listAlerts)
        .post(ORG + "/alert-channels", Requires.organizationAdmin(), ctx -> {
          ManagedOrganization managed = managed(ctx);
          JsonBody body = JsonBody.parse(ctx, maxBodyBytes);
          body.allowOnly(Set.of("type", "url"));
          String type = body.optionalString("type", 32).orElse("webhook");
          if (!type.equals("webhook")) {
            throw ApiException.badRequest("type", "The channel types are: webhook");
          }
          AlertChannels.Created created = channels.create(
              managed.orgId(),
              body.requiredString("url", 4096),
              managed.principal().credentialId());
          Responses.json(ctx, 201, AlertViews.channel(created.channel(), created.secret()));
        })
        .get(
            ORG + "/alert-channels",
            Requires.organizationAdmin(),
            ctx -> Responses.json(
                ctx,
                AlertViews.list(channels.list(managed(ctx).orgId()).stream()
                    .map(channel -> AlertViews.channel(channel, null))
                    .toList())))
        .delete(ORG + "/alert-channels/{channel_id}", Requires.organizationAdmin(), ctx -> {
          channels.delete(managed(ctx).orgId(), ctx.pathParam("channel_id"));
          ctx.status(204);
        })
        .get(ORG + "/alert-channels/{channel_id}/deliveries", Requires.organizationAdmin(), ctx -> {
          String orgId = managed(ctx).orgId();
          int limit = QueryParams.integer(ctx, "limit", 50, 1, 500);
          Responses.json(
              ctx,
              AlertViews.list(
                  channels.deliveries(orgId, ctx.pathParam("channel_id"), limit).stream()
                      .map(AlertViews::delivery)
                      .toList()));
        })
        .post(ORG + "/alert-channels/{channel_id}/test", Requires.organizationAdmin(), ctx -> {
          String orgId = managed(ctx).orgId();
          AlertChannel channel = channels.get(orgId, ctx.pathParam("channel_id"));
          // One attempt now, so the caller sees at once whether the endpoint takes it.
          Delivery delivery = sender.once(
              channel,
              null,
              WebhookSender.event("alert.test", orgId, null, clock.instant().getEpochSecond()));
          Responses.json(ctx, AlertViews.delivery(delivery));
        });
  }

  private void listAlerts(Context ctx) {
    String orgId = managed(ctx).orgId();
    Alert.State state = java.util.Optional.ofNullable(ctx.queryParam("state"))
        .map(s -> switch (s) {
          case "firing", "resolved" -> Alert.State.valueOf(s.toUpperCase(Locale.ROOT));
          default -> throw ApiException.badRequest("state", "'state' is firing or resolved");
        })
        .orElse(null);
    AlertKind kind = java.util.Optional.ofNullable(ctx.queryParam("kind"))
        .map(k -> AlertKind.fromId(k)
            .orElseThrow(() -> ApiException.badRequest(
                "kind",
                "'kind' is one of "
                    + java.util.Arrays.stream(AlertKind.values())
                        .map(AlertKind::id)
                        .collect(java.util.stream.Collectors.joining(", ")))))
        .orElse(null);
    int limit = QueryParams.integer(ctx, "limit", 50, 1, 500);
    Responses.json(
        ctx,
        AlertViews.list(alerts.list(orgId, state, kind, ctx.queryParam("before"), limit).stream()
            .map(AlertViews::alert)
            .toList()));
  }

  private ManagedOrganization managed(Context ctx) {
    return ManagedOrganization.of(ctx);
  }
}
