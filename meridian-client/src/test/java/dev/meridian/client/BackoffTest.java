package dev.meridian.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** gRPC connection-backoff: initial 1 s, multiplier 1.6, jitter 0.2, capped (30 s here). */
class BackoffTest {
  @Test
  void growsByTheMultiplierUpToTheCap() {
    Backoff b = Backoff.standard(() -> 0.5); // 0.5: no spread
    assertThat(b.next()).isEqualTo(Duration.ofSeconds(1));
    assertThat(b.next()).isEqualTo(Duration.ofMillis(1600));
    assertThat(b.next()).isEqualTo(Duration.ofMillis(2560));
    for (int i = 0; i < 20; i++) {
      b.next();
    }
    assertThat(b.next()).isEqualTo(Duration.ofSeconds(30));
    b.reset();
    assertThat(b.next()).isEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void jitterSpreadsByTwentyPercentEitherWay() {
    assertThat(Backoff.standard(() -> 0.0).next()).isEqualTo(Duration.ofMillis(800));
    assertThat(Backoff.standard(() -> 1.0).next()).isEqualTo(Duration.ofMillis(1200));
  }
}
