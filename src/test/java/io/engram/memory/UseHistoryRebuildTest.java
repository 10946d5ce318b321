package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A memory's use history rebuilt from all its uses (after a merge or its undo) is the one recorded
 * use by use: retrievals out, answers within an hour of an earlier answer counted once.
 */
class UseHistoryRebuildTest {
  private static final Instant T = Instant.parse("2030-01-01T10:00:00Z");

  @Test
  void rebuiltAsRecorded() {
    List<UseHistory.Use> all = List.of(
        new UseHistory.Use(UseKind.ANSWER, T.plus(Duration.ofMinutes(30))),
        new UseHistory.Use(UseKind.RETRIEVAL, T.plus(Duration.ofMinutes(5))),
        new UseHistory.Use(UseKind.ENCODE, T),
        new UseHistory.Use(UseKind.ANSWER, T.plus(Duration.ofMinutes(10))),
        new UseHistory.Use(UseKind.ANSWER, T.plus(Duration.ofMinutes(80))),
        new UseHistory.Use(UseKind.REINFORCE, T.plus(Duration.ofMinutes(20))));
    UseHistory rebuilt = UseRecorder.history(all);
    assertThat(rebuilt.recent())
        .containsExactly(
            new UseHistory.Use(UseKind.ENCODE, T),
            new UseHistory.Use(UseKind.ANSWER, T.plus(Duration.ofMinutes(10))),
            new UseHistory.Use(UseKind.REINFORCE, T.plus(Duration.ofMinutes(20))),
            new UseHistory.Use(UseKind.ANSWER, T.plus(Duration.ofMinutes(80))));
    UseHistory recorded = UseHistory.first(UseKind.ENCODE, T);
    for (UseHistory.Use use : List.of(
        new UseHistory.Use(UseKind.ANSWER, T.plus(Duration.ofMinutes(10))),
        new UseHistory.Use(UseKind.REINFORCE, T.plus(Duration.ofMinutes(20))),
        new UseHistory.Use(UseKind.ANSWER, T.plus(Duration.ofMinutes(30))),
        new UseHistory.Use(UseKind.ANSWER, T.plus(Duration.ofMinutes(80))))) {
      if (!UseRecorder.massed(recorded, use.kind(), use.at())) {
        recorded = recorded.plus(use.kind(), use.at());
      }
    }
    assertThat(rebuilt).isEqualTo(recorded);
  }
}
