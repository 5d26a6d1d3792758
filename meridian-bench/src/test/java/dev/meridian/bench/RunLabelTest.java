package dev.meridian.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The event column tells a warm-up run from a measured one (both go to --out). */
class RunLabelTest {
  @Test
  void aSingleRunKeepsTheBareEventName() {
    assertThat(LoadGenerator.label("connect", 0, 0, 1)).isEqualTo("connect");
  }

  @Test
  void warmUpAndMeasuredRunsAreNumbered() {
    assertThat(LoadGenerator.label("one-endpoint", 0, 2, 3)).isEqualTo("one-endpoint (warm-up 1/2)");
    assertThat(LoadGenerator.label("one-endpoint", 1, 2, 3)).isEqualTo("one-endpoint (warm-up 2/2)");
    assertThat(LoadGenerator.label("one-endpoint", 2, 2, 3))
        .isEqualTo("one-endpoint (run 1/3, after 2 warm-up)");
    assertThat(LoadGenerator.label("connect", 1, 0, 2)).isEqualTo("connect (run 2/2)");
  }
}
