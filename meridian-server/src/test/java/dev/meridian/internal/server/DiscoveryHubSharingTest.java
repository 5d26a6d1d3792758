package dev.meridian.internal.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.internal.protocol.Sharing;
import dev.meridian.internal.protocol.Subscription;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Issue 19: each hub owns its Sharing; two servers in one JVM share nothing. Checked by what a
 * Sharing does (intern a large subscription), since which object a hub holds proves nothing.
 */
class DiscoveryHubSharingTest {
  private static final List<String> NAMES =
      IntStream.range(0, 100).mapToObj(i -> "cluster-" + i).toList();

  /** The names a subscription holds after a SotW request for {@link #NAMES} (a fresh list). */
  private static Set<String> subscribed(Sharing sharing) {
    Subscription s = new Subscription(sharing);
    s.replace(new ArrayList<>(NAMES));
    return s.names();
  }

  @Test
  void streamsOfOneHubShareALargeSubscriptionAndAnotherHubSharesNothingWithThem() {
    DiscoveryHub a = new DiscoveryHub();
    DiscoveryHub b = new DiscoveryHub();
    Set<String> first = subscribed(a.sharing());
    assertThat(subscribed(a.sharing())).as("same hub: one shared set").isSameAs(first);
    assertThat(subscribed(b.sharing())).as("another hub: its own set")
        .isEqualTo(first).isNotSameAs(first);
  }
}
