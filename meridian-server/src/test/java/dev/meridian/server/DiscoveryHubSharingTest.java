package dev.meridian.server;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Issue 19: each hub owns its Sharing; two servers in one JVM share nothing. */
class DiscoveryHubSharingTest {
  @Test
  void eachHubHasItsOwnSharingForAllItsStreams() {
    DiscoveryHub a = new DiscoveryHub();
    DiscoveryHub b = new DiscoveryHub();
    assertThat(a.sharing()).isSameAs(a.sharing());
    assertThat(a.sharing()).isNotSameAs(b.sharing());
    // The warm-up's private hub neither: what its synthetic streams intern goes with it.
    assertThat(a.warmupSibling().sharing()).isNotSameAs(a.sharing());
  }
}
