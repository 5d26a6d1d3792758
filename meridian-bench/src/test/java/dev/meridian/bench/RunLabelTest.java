package dev.meridian.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The event column tells a warm-up run from a measured one (both go to --out); the transport
 * column a plaintext run from an mTLS one.
 */
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

  @Test
  void theTransportColumnSaysPlaintextOrMtls() {
    LoadGenerator.Result r = new LoadGenerator.Result("meridian", LoadGenerator.transport(true),
        "delta", 100, 1000, "connect", 1000, new Stats(new double[] {1, 2}), 1, 1, 1, 1, 1,
        new GcLog.Pauses(0, 0, 0), 0, 0, 1, 2);
    assertThat(r.row()).startsWith("| meridian | mTLS | 100 | 1,000 | delta | connect | 1000/1000 |");
    assertThat(LoadGenerator.transport(false)).isEqualTo("plaintext");
    String header = LoadGenerator.HEADER.lines().findFirst().orElseThrow();
    assertThat(header).startsWith("| server | transport | clusters |");
    assertThat(r.row().chars().filter(c -> c == '|').count())
        .isEqualTo(header.chars().filter(c -> c == '|').count())
        .isEqualTo(LoadGenerator.HEADER.lines().skip(1).findFirst().orElseThrow().chars()
            .filter(c -> c == '|').count());
  }
}
