package dev.meridian.internal.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.internal.config.ConfigLoader;
import dev.meridian.xds.ResourceType;
import dev.meridian.server.Meridian;
import dev.meridian.testing.StaticState;
import org.junit.jupiter.api.Test;

/**
 * Issue 22: no static mutable state in the server and the modules it embeds (protocol, config),
 * so that two servers in one JVM share nothing but immutable values. See {@link StaticState}; a
 * static that is mutable in form but safe to share goes in its allowlist, with the reason.
 */
class NoStaticMutableStateTest {
  @Test
  void everyStaticFieldOfTheServerProtocolAndConfigIsImmutable() {
    StaticState.Result r = StaticState.scan(ResourceType.class, ConfigLoader.class,
        Meridian.class, MeridianServer.class);
    // Not vacuous: the three modules' classes were found (protocol, config, server: 3 roots).
    assertThat(r.roots()).hasSize(3);
    assertThat(r.classes()).isGreaterThan(160);
    assertThat(r.staticFields()).isGreaterThan(130);
    assertThat(r.problems()).as(StaticState.describe(r)).isEmpty();
  }
}
