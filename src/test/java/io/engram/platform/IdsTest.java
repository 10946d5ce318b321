package io.engram.platform;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class IdsTest {

  @Test
  void idsIncreaseStrictlyEvenWithinOneMillisecondOrWhenTheClockGoesBack() {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      ids.add(Ids.newId("org", 1_000_000_000_000L));
    }
    ids.add(Ids.newId("org", 900_000_000_000L));
    ids.add(Ids.newId("org", 1_000_000_000_001L));
    assertThat(ids).isSorted().doesNotHaveDuplicates();
    assertThat(ids.getFirst()).matches("org_[0-9a-z]{26}");
  }

  @Test
  void anIdSaysTheMillisecondItWasMadeIn() {
    // Made now: its millisecond is now's, or a later one when this process made ids ahead.
    long now = System.currentTimeMillis();
    assertThat(Ids.millis(Ids.newId("mem", now))).isGreaterThanOrEqualTo(now);
    assertThat(Ids.millis("mem_0000000001" + "0".repeat(16))).isEqualTo(1);
    assertThat(Ids.millis("mem_00000000z0" + "0".repeat(16))).isEqualTo(31 * 32);
    assertThat(Ids.millis("mem_")).isEqualTo(-1);
    assertThat(Ids.millis("no-prefix")).isEqualTo(-1);
    assertThat(Ids.millis("mem_!!!!!!!!!!!!!!!!!!!!!!!!!!")).isEqualTo(-1);
  }
}
