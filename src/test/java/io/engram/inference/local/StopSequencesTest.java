package io.engram.inference.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class StopSequencesTest {

  @Test
  void holdsBackOnlyWhatCouldStartAStopAndEndsBeforeIt() {
    StopSequences stops = new StopSequences(List.of("END"));
    assertThat(stops.accept("Hello ")).isEqualTo("Hello ");
    assertThat(stops.accept("E")).isEmpty();
    assertThat(stops.accept("x")).isEqualTo("Ex");
    assertThat(stops.accept(" the E")).isEqualTo(" the ");
    assertThat(stops.accept("ND and more")).isEmpty();
    assertThat(stops.stopped()).isTrue();
    assertThat(stops.accept("ignored")).isEmpty();
    assertThat(stops.text()).isEqualTo("Hello Ex the ");
  }

  @Test
  void aStopInsideOnePieceCutsThePiece() {
    StopSequences stops = new StopSequences(List.of("\n\n", "###"));
    assertThat(stops.accept("one###two")).isEqualTo("one");
    assertThat(stops.stopped()).isTrue();
  }

  @Test
  void withoutStopsEverythingPassesAndFlushReleasesTheTail() {
    StopSequences none = new StopSequences(List.of());
    assertThat(none.accept("abc")).isEqualTo("abc");
    StopSequences stops = new StopSequences(List.of("STOP"));
    assertThat(stops.accept("ST")).isEmpty();
    assertThat(stops.flush()).isEqualTo("ST");
    assertThat(stops.text()).isEqualTo("ST");
  }
}
