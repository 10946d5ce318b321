package io.engram.instances;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.instances.storage.StorageBilling;
import io.engram.support.Http;
import io.engram.support.MutableClock;
import io.engram.support.TestServer;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Buying storage: the allowance rises at once (and a file that did not fit then fits), each day
 * is charged the month's price prorated, exactly, in a ledger readable by day range.
 */
class StorageBillingTest {
  private static final MutableClock CLOCK = new MutableClock(Instant.parse("2026-11-24T10:00:00Z"));
  private static TestServer server;

  @BeforeAll
  static void start() {
    server = TestServer.builder().clock(CLOCK).start();
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private static Http.Response upgrade(String org, String json) {
    return server.asOperator(
        server.http.post("/v1/organizations/" + org + "/storage/upgrade").json(json));
  }

  private static JsonNode ledger(String org, String query) {
    Http.Response ledger =
        server.asOperator(server.http.get("/v1/organizations/" + org + "/billing/storage" + query));
    assertThat(ledger.status()).as(ledger.text()).isEqualTo(200);
    return ledger.json();
  }

  @Test
  void boughtStorageRaisesTheAllowanceAtOnceAndIsChargedPerDay() {
    String org = server.createOrganization("free"); // 1 GB
    Http.Response bought = upgrade(org, "{\"training_data_gb\": 2.5, \"embeddings_gb\": 1}");
    assertThat(bought.status()).as(bought.text()).isEqualTo(200);
    JsonNode limits = bought.json().get("limits");
    assertThat(limits.get("training_data_gb").decimalValue()).isEqualByComparingTo("3.5");
    assertThat(limits.get("embeddings_gb").decimalValue()).isEqualByComparingTo("2");
    assertThat(limits.get("total_gb").decimalValue()).isEqualByComparingTo("4.5");
    assertThat(limits.at("/purchased/training_data_gb").decimalValue()).isEqualByComparingTo("2.5");
    // More adds to it.
    upgrade(org, "{\"training_data_gb\": 0.5}");

    // November has 30 days: 3 GB x $0.50 / 30 = $0.05; 1 GB x $0.30 / 30 = $0.01.
    JsonNode today = ledger(org, "");
    assertThat(today.get("data")).hasSize(2);
    assertThat(today.at("/data/0/item").asText()).isEqualTo("embeddings");
    assertThat(today.at("/data/0/amount").asText()).isEqualTo("0.010000");
    assertThat(today.at("/data/1/item").asText()).isEqualTo("training_data");
    assertThat(today.at("/data/1/quantity").decimalValue()).isEqualByComparingTo("3");
    assertThat(today.at("/data/1/amount").asText()).isEqualTo("0.050000");
    assertThat(today.get("total").asText()).isEqualTo("0.060000");

    // The next day (December: 31 days) is charged by the hourly accrual.
    CLOCK.advance(Duration.ofDays(1));
    server.engram.runStorageHousekeeping();
    server.engram.runStorageHousekeeping(); // idempotent
    JsonNode twoDays = ledger(org, "?from=2026-11-01&to=2026-11-30");
    assertThat(twoDays.get("data")).hasSize(4);
    assertThat(twoDays.get("total").asText()).isEqualTo("0.120000");
    assertThat(ledger(org, "?from=2026-11-25&to=2026-11-25").get("total").asText())
        .isEqualTo("0.060000");
    CLOCK.advance(Duration.ofDays(6)); // 2026-12-01
    server.engram.runStorageHousekeeping();
    JsonNode december = ledger(org, "?from=2026-12-01&to=2026-12-01");
    // 3 x 0.50 / 31 = 0.048387 (half-even), 1 x 0.30 / 31 = 0.009677
    assertThat(december.get("total").asText()).isEqualTo("0.058064");
  }

  @Test
  void aPurchaseIsCheckedAndExact() {
    String org = server.createOrganization("seed");
    for (String bad : new String[] {
      "{}", "{\"training_data_gb\": -1}", "{\"training_data_gb\": 0.0001}",
      "{\"training_data_gb\": \"5\"}", "{\"training_data_gb\": 100001}", "{\"disk_gb\": 1}",
      "{\"training_data_gb\": 0, \"embeddings_gb\": 0}"
    }) {
      Http.Response refused = upgrade(org, bad);
      assertThat(refused.status()).as(bad + " -> " + refused.text()).isEqualTo(400);
    }
    assertThat(ledger(org, "").get("data")).isEmpty();
    assertThat(server
            .asOperator(server.http.get(
                "/v1/organizations/" + org + "/billing/storage?from=2026-12-01&to=2026-11-01"))
            .status())
        .isEqualTo(400);
    assertThat(server
            .asOperator(
                server.http.get("/v1/organizations/" + org + "/billing/storage?from=2026-13-01"))
            .status())
        .isEqualTo(400);
    assertThat(server
            .asOperator(server.http.get(
                "/v1/organizations/" + org + "/billing/storage?to=%2B999999999-12-31"))
            .status())
        .isEqualTo(400);
    assertThat(StorageBilling.dayAmountMicros(
            new BigDecimal("0.001"), StorageBilling.TRAINING_DATA_PRICE, LocalDate.of(2026, 2, 1)))
        .isEqualTo(18); // 0.0005 / 28 = 0.00001786 dollars
  }
}
