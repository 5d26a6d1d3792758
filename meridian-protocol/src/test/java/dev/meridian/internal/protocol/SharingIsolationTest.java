package dev.meridian.internal.protocol;

import dev.meridian.xds.ResourceType;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.ref.WeakReference;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Issue 19: sharing is owned by a hub, never static, so two servers in one JVM share nothing: one
 * hub's interned objects are never handed to another's streams, and each hub's memory goes with it.
 */
class SharingIsolationTest {
  static List<String> names() {
    return IntStream.range(0, 200).mapToObj(i -> new String("cla-" + i)).toList();
  }

  static Set<String> endpointSubscription(SotwPeer peer) {
    return peer.stream.states.get(ResourceType.ENDPOINT).subscription.names();
  }

  @Test
  void streamsOfOneHubShareASubscriptionThoseOfAnotherHubDoNot() {
    List<XdsResource> endpoints = names().stream().map(n -> Fixtures.endpoints(n, 1)).toList();
    ServedConfig config = Fixtures.config(endpoints.toArray(XdsResource[]::new));
    Sharing hubA = Sharing.interning();
    Sharing hubB = Sharing.interning();
    SotwPeer a1 = new SotwPeer(true, null, config, MakeBeforeBreakTest.FIXED, hubA);
    SotwPeer a2 = new SotwPeer(true, null, config, MakeBeforeBreakTest.FIXED, hubA);
    SotwPeer b1 = new SotwPeer(true, null, config, MakeBeforeBreakTest.FIXED, hubB);
    String[] all = names().toArray(String[]::new);
    for (SotwPeer p : List.of(a1, a2, b1)) {
      p.subscribe(ResourceType.ENDPOINT, all);
      p.ack(ResourceType.ENDPOINT, all);
    }
    assertThat(endpointSubscription(a1)).isSameAs(endpointSubscription(a2));
    assertThat(endpointSubscription(b1)).isEqualTo(endpointSubscription(a1))
        .isNotSameAs(endpointSubscription(a1));
  }

  @Test
  void aHubsInternedSetsGoWithItWhileAnotherHubKeepsTheSameNames() {
    Sharing hubB = Sharing.interning();
    Subscription kept = new Subscription(hubB);
    kept.replace(names());
    WeakReference<Set<String>> gone = internedByAnotherHub();
    // Bounded: a collected weak reference shows that nothing (no static table) holds the set.
    for (int i = 0; i < 100 && gone.get() != null; i++) {
      System.gc();
    }
    assertThat(gone.get()).as("hub A's interned set, after hub A went away").isNull();
    Subscription again = new Subscription(hubB);
    again.replace(names());
    assertThat(again.names()).isSameAs(kept.names()); // hub B still shares its own
  }

  /** A hub with one stream's subscription, dropped on return; only a weak reference remains. */
  private static WeakReference<Set<String>> internedByAnotherHub() {
    Subscription s = new Subscription(Sharing.interning());
    s.replace(names());
    return new WeakReference<>(s.names());
  }

  @Test
  void plainSharingInternsNothing() {
    Subscription a = new Subscription(Sharing.plain());
    Subscription b = new Subscription(Sharing.plain());
    a.replace(names());
    b.replace(names());
    assertThat(a.names()).isEqualTo(b.names()).isNotSameAs(b.names());
  }
}
