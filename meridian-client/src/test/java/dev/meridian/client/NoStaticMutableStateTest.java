package dev.meridian.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.xds.ResourceType;
import dev.meridian.testing.StaticState;
import org.junit.jupiter.api.Test;

/**
 * Issue 22: no static mutable state in the client library (nor in the protocol module it uses),
 * so that two clients, or a client and a server, in one JVM share nothing but immutable values.
 * See {@link StaticState}.
 */
class NoStaticMutableStateTest {
  @Test
  void everyStaticFieldOfTheClientIsImmutable() {
    StaticState.Result r = StaticState.scan(XdsClient.class, ResourceType.class);
    assertThat(r.roots()).hasSize(2);
    assertThat(r.classes()).isGreaterThan(110);
    assertThat(r.staticFields()).isGreaterThan(60);
    assertThat(r.problems()).as(StaticState.describe(r)).isEmpty();
  }
}
