package dev.meridian.internal.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.xds.ResourceType;
import dev.meridian.testing.StaticState;
import org.junit.jupiter.api.Test;

/**
 * Issue 22: no static mutable state in config loading and the protocol core (see
 * {@link StaticState}); the server's copy of this test covers them too, this one fails sooner.
 */
class NoStaticMutableStateTest {
  @Test
  void everyStaticFieldOfConfigAndProtocolIsImmutable() {
    StaticState.Result r = StaticState.scan(ConfigLoader.class, ResourceType.class);
    assertThat(r.roots()).hasSize(2);
    assertThat(r.classes()).isGreaterThan(90);
    assertThat(r.staticFields()).isGreaterThan(90);
    assertThat(r.problems()).as(StaticState.describe(r)).isEmpty();
  }
}
