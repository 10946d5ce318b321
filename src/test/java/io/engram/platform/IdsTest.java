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
}
