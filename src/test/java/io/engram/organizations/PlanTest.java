package io.engram.organizations;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class PlanTest {

  @Test
  void everyPlanIdOfTheSpecNormalizesIntoAnOrderedTier() {
    List<String> ids = List.of(
        "founder",
        "free",
        "spark",
        "seed",
        "rise",
        "growth",
        "boost",
        "scale",
        "grow",
        "expand",
        "prime",
        "public",
        "elite",
        "titan",
        "god",
        "dedicated");
    for (String id : ids) {
      assertThat(Plan.fromId(id)).as(id).isPresent();
      assertThat(Plan.fromId(id.toUpperCase())).as(id).isPresent();
    }
    assertThat(Plan.FOUNDER.tier()).isEqualTo(Tier.FREE);
    assertThat(Tier.SEED.atLeast(Tier.SPARK)).isTrue();
    assertThat(Tier.SPARK.atLeast(Tier.SEED)).isFalse();
    assertThat(Tier.DEDICATED.atLeast(Tier.GOD)).isTrue();
    assertThat(Plan.fromId("platinum")).isEmpty();
  }

  @Test
  void capabilityLimitsAreTheSpecs() {
    assertThat(Plan.FREE.limits().capabilityCount()).isEqualTo(Limit.of(3));
    assertThat(Plan.SPARK.limits().capabilityCount()).isEqualTo(Limit.of(3));
    assertThat(Plan.SEED.limits().capabilityCount()).isEqualTo(Limit.of(7));
    assertThat(Plan.RISE.limits().capabilityCount()).isEqualTo(Limit.of(7));
    for (Plan plan : List.of(Plan.GROWTH, Plan.DEDICATED, Plan.BOOST, Plan.SCALE, Plan.GOD)) {
      assertThat(plan.limits().capabilityCount().isUnlimited()).as(plan.id()).isTrue();
    }
  }

  @Test
  void requestLimitsAreTheSpecs() {
    assertThat(Plan.SPARK.limits().requestsPerMinute()).isEqualTo(Limit.of(60));
    assertThat(Plan.SEED.limits().requestsPerMinute()).isEqualTo(Limit.of(200));
    assertThat(Plan.RISE.limits().requestsPerMinute()).isEqualTo(Limit.of(200));
    assertThat(Plan.GROWTH.limits().requestsPerMinute()).isEqualTo(Limit.of(1000));
    assertThat(Plan.BOOST.limits().requestsPerMinute()).isEqualTo(Limit.of(1000));
  }

  @Test
  void extendedSurfaceLimitsAreTheSpecs() {
    assertThat(Plan.SPARK.limits())
        .extracting(
            PlanLimits::concurrentRequests, PlanLimits::tokensPerRequest, PlanLimits::tokensPerHour)
        .containsExactly(Limit.of(5), Limit.of(2048), Limit.of(10_000));
    assertThat(Plan.SEED.limits())
        .extracting(
            PlanLimits::concurrentRequests, PlanLimits::tokensPerRequest, PlanLimits::tokensPerHour)
        .containsExactly(Limit.of(20), Limit.of(4096), Limit.of(100_000));
    assertThat(Plan.SCALE.limits())
        .extracting(
            PlanLimits::concurrentRequests, PlanLimits::tokensPerRequest, PlanLimits::tokensPerHour)
        .containsExactly(Limit.of(100), Limit.of(8192), Limit.UNLIMITED);
    assertThat(Plan.DEDICATED.limits())
        .extracting(
            PlanLimits::concurrentRequests, PlanLimits::tokensPerRequest, PlanLimits::tokensPerHour)
        .containsExactly(Limit.UNLIMITED, Limit.of(16384), Limit.UNLIMITED);
  }

  @Test
  void storageIsTheSpecs() {
    long[] expected = {1, 10, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000};
    List<Plan> plans = List.of(
        Plan.FREE,
        Plan.SPARK,
        Plan.SEED,
        Plan.RISE,
        Plan.BOOST,
        Plan.SCALE,
        Plan.GROW,
        Plan.EXPAND,
        Plan.PRIME,
        Plan.PUBLIC,
        Plan.ELITE,
        Plan.TITAN);
    for (int i = 0; i < plans.size(); i++) {
      assertThat(plans.get(i).limits().storageGb())
          .as(plans.get(i).id())
          .isEqualTo(Limit.of(expected[i]));
    }
    assertThat(Plan.GOD.limits().storageGb().isUnlimited()).isTrue();
  }

  @Test
  void limitsNeverShrinkAsTheTierRises() {
    Plan[] plans = Arrays.stream(Plan.values()).filter(p -> p != Plan.FOUNDER).toArray(Plan[]::new);
    for (int i = 1; i < plans.length; i++) {
      PlanLimits lower = plans[i - 1].limits();
      PlanLimits higher = plans[i].limits();
      assertThat(atLeast(higher.requestsPerMinute(), lower.requestsPerMinute()))
          .as(plans[i].id())
          .isTrue();
      assertThat(atLeast(higher.concurrentRequests(), lower.concurrentRequests()))
          .as(plans[i].id())
          .isTrue();
      assertThat(atLeast(higher.tokensPerRequest(), lower.tokensPerRequest()))
          .as(plans[i].id())
          .isTrue();
      assertThat(atLeast(higher.tokensPerHour(), lower.tokensPerHour()))
          .as(plans[i].id())
          .isTrue();
      assertThat(atLeast(higher.storageGb(), lower.storageGb()))
          .as(plans[i].id())
          .isTrue();
    }
  }

  @Test
  void onlyPaidPlansMaySwitchWriteMode() {
    assertThat(Plan.FOUNDER.isPaid()).isFalse();
    assertThat(Plan.FREE.isPaid()).isFalse();
    assertThat(Plan.SPARK.isPaid()).isTrue();
  }

  private static boolean atLeast(Limit higher, Limit lower) {
    return higher.isUnlimited() || (!lower.isUnlimited() && higher.value() >= lower.value());
  }
}
