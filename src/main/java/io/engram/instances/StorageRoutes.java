package io.engram.instances;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.access.ManagedOrganization;
import io.engram.access.Requires;
import io.engram.instances.storage.StorageBilling;
import io.engram.instances.storage.StorageUsage;
import io.engram.instances.storage.StorageViews;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.javalin.http.Context;
import java.math.BigDecimal;
import java.time.LocalDate;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * An organization's storage as a whole: {@code GET /storage} (usage, measured, against its
 * limits), {@code POST /storage/upgrade} (more allowance at once, charged daily) and
 * {@code GET /billing/storage} (the ledger of those charges).
 */
final class StorageRoutes implements RouteModule {
  private static final String ORG = "/v1/organizations/{org_id}";
  private static final int MAX_LEDGER_DAYS = 366;

  private final StorageUsage usage;
  private final StorageBilling billing;
  private final long maxBodyBytes;

  StorageRoutes(StorageUsage usage, StorageBilling billing, long maxBodyBytes) {
    this.usage = usage;
    this.billing = billing;
    this.maxBodyBytes = maxBodyBytes;
  }

  @Override
  public void register(Routes routes) {
    routes
        .get(ORG + "/storage", Requires.organizationAdmin(), ctx -> {
          ManagedOrganization managed = managed(ctx);
          Responses.json(ctx, usageView(managed));
        })
        .post(ORG + "/storage/upgrade", Requires.organizationAdmin(), this::upgrade)
        .get(ORG + "/billing/storage", Requires.organizationAdmin(), this::ledger);
  }

  private Map<String, Object> usageView(ManagedOrganization managed) {
    return StorageViews.usage(usage.measure(managed.orgId()), usage.limits(managed.organization()));
  }

  private void upgrade(Context ctx) {
    ManagedOrganization managed = managed(ctx);
    JsonBody body = JsonBody.parse(ctx, maxBodyBytes);
    body.allowOnly(Set.of("training_data_gb", "embeddings_gb"));
    BigDecimal training = gigabytes(body, "training_data_gb");
    BigDecimal embeddings = gigabytes(body, "embeddings_gb");
    if (training.signum() == 0 && embeddings.signum() == 0) {
      throw ApiException.badRequest(
          "training_data_gb", "Buy some storage: training_data_gb or embeddings_gb above 0");
    }
    billing.upgrade(
        managed.organization(), training, embeddings, managed.principal().credentialId());
    Responses.json(ctx, usageView(managed));
  }

  /** A number of GB: 0 to 100,000, at most three decimals (a thousandth of a GB is 1 MB). */
  private static BigDecimal gigabytes(JsonBody body, String field) {
    JsonNode node = body.get(field);
    if (node == null) {
      return BigDecimal.ZERO;
    }
    if (!node.isNumber()) {
      throw ApiException.badRequest(field, "'" + field + "' must be a number of GB");
    }
    BigDecimal gb = node.decimalValue();
    if (gb.signum() < 0
        || gb.compareTo(StorageBilling.MAX_GB) > 0
        || gb.stripTrailingZeros().scale() > 3) {
      throw ApiException.badRequest(
          field,
          "'" + field + "' must be between 0 and " + StorageBilling.MAX_GB
              + " GB, in steps of 0.001");
    }
    return gb;
  }

  private void ledger(Context ctx) {
    ManagedOrganization managed = managed(ctx);
    LocalDate to = day(ctx, "to", billing.today());
    LocalDate from = day(ctx, "from", to.withDayOfMonth(1));
    if (from.isAfter(to) || from.plusDays(MAX_LEDGER_DAYS).isBefore(to)) {
      throw ApiException.badRequest(
          "from", "'from' must be on or before 'to', at most " + MAX_LEDGER_DAYS + " days before");
    }
    List<StorageBilling.Charge> charges = billing.ledger(managed.orgId(), from, to);
    long total = charges.stream().mapToLong(StorageBilling.Charge::amountMicros).sum();
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("object", "billing.storage");
    view.put("organization_id", managed.orgId());
    view.put("from", from.toString());
    view.put("to", to.toString());
    view.put("currency", "usd");
    view.put(
        "data",
        charges.stream()
            .map(charge -> {
              Map<String, Object> line = new LinkedHashMap<>();
              line.put("day", charge.day().toString());
              line.put("item", charge.item());
              line.put("quantity", charge.quantity());
              line.put("monthly_unit_price", charge.unitPrice());
              line.put("amount", dollars(charge.amountMicros()));
              return line;
            })
            .toList());
    view.put("total", dollars(total));
    Responses.json(ctx, view);
  }

  /** Micro-dollars as a decimal string of dollars: exact, and no JSON float to round it. */
  static String dollars(long micros) {
    return BigDecimal.valueOf(micros, 6).toPlainString();
  }

  private static LocalDate day(Context ctx, String name, LocalDate fallback) {
    String raw = ctx.queryParam(name);
    if (raw == null) {
      return fallback;
    }
    try {
      LocalDate day = LocalDate.parse(raw.strip());
      // Years the ledger can hold; date arithmetic near LocalDate's ends would fail otherwise.
      if (day.getYear() >= 1970 && day.getYear() <= 9999) {
        return day;
      }
    } catch (java.time.format.DateTimeParseException e) {
      // answered below
    }
    throw ApiException.badRequest(name, "'" + name + "' is a day from 1970 to 9999, as 2026-11-24");
  }

  private ManagedOrganization managed(Context ctx) {
    return ManagedOrganization.of(ctx);
  }
}
