package dev.meridian.internal.protocol;

import dev.meridian.xds.ResourceType;

import static dev.meridian.internal.protocol.DeltaPeer.names;
import static dev.meridian.internal.protocol.DeltaPeer.req;
import static dev.meridian.internal.protocol.DeltaPeer.responses;
import static dev.meridian.internal.protocol.DeltaPeer.single;
import static dev.meridian.internal.protocol.Fixtures.cluster;
import static dev.meridian.internal.protocol.Fixtures.clusterWithTimeout;
import static dev.meridian.internal.protocol.Fixtures.config;
import static dev.meridian.internal.protocol.Fixtures.endpoints;
import static dev.meridian.internal.protocol.Fixtures.listener;
import static org.assertj.core.api.Assertions.assertThat;

import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Incremental xDS scenarios on the pure core, across Delta ADS and the per-type Delta services. */
class DeltaStreamTest {
  enum Variant {
    DELTA_ADS, DELTA_PER_TYPE;

    DeltaPeer peer(ResourceType type, ServedConfig config) {
      return new DeltaPeer(this == DELTA_ADS, type, config);
    }
  }

  static final ResourceType CDS = ResourceType.CLUSTER;
  static final ResourceType EDS = ResourceType.ENDPOINT;

  @ParameterizedTest
  @EnumSource(Variant.class)
  void legacyWildcardGetsEverythingWithPerResourceVersions(Variant v) {
    // Spec "How the client specifies...": a first request with empty subscribe and unsubscribe.
    DeltaPeer peer = v.peer(CDS, config(cluster("a"), cluster("b")));
    DeltaDiscoveryResponse r = single(peer.send(req(CDS)));
    assertThat(names(r)).containsExactly("a", "b");
    assertThat(r.getResources(0).getVersion()).isEqualTo(cluster("a").version());
    assertThat(r.getNonce()).isNotEmpty();
    assertThat(r.getSystemVersionInfo()).isNotEmpty();
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void onlyChangedResourcesAreSent(Variant v) {
    DeltaPeer peer = v.peer(CDS, config(cluster("a"), cluster("b"), cluster("c")));
    peer.subscribe(CDS, "*");
    peer.ack(CDS);
    DeltaDiscoveryResponse r = single(peer.reload(config(cluster("a"), clusterWithTimeout("b", 4), cluster("c"))));
    assertThat(names(r)).containsExactly("b");
    assertThat(r.getRemovedResourcesList()).isEmpty();
    assertThat(responses(peer.ack(CDS))).isEmpty();
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void aLargeWildcardClientGetsExactlyWhatChangedAddedAndRemoved(Variant v) {
    // 100 clusters: the reload's answer is computed once for every client in sync; it must be
    // the same exact diff as per name.
    List<XdsResource> before = new java.util.ArrayList<>();
    List<XdsResource> after = new java.util.ArrayList<>();
    for (int i = 0; i < 100; i++) {
      before.add(cluster("c" + i));
      if (i < 10) {
        after.add(clusterWithTimeout("c" + i, 7)); // changed
      } else if (i >= 95) {
        continue; // removed
      } else {
        after.add(cluster("c" + i)); // unchanged
      }
    }
    after.add(cluster("new1"));
    after.add(cluster("new2"));
    DeltaPeer[] peers = {v.peer(CDS, config(before.toArray(XdsResource[]::new))),
        v.peer(CDS, config(before.toArray(XdsResource[]::new)))};
    ServedConfig next = config(after.toArray(XdsResource[]::new));
    for (DeltaPeer peer : peers) {
      peer.subscribe(CDS, "*");
      peer.ack(CDS);
      // On ADS the removals may follow in a later response (make-before-break): collect both.
      List<DeltaDiscoveryResponse> got = new java.util.ArrayList<>(responses(peer.reload(next)));
      got.addAll(responses(peer.ack(CDS)));
      assertThat(got.stream().flatMap(r -> names(r).stream()).toList()).containsExactlyInAnyOrder(
          "c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9", "new1", "new2");
      assertThat(got.stream().flatMap(r -> r.getRemovedResourcesList().stream()).toList())
          .containsExactlyInAnyOrder("c95", "c96", "c97", "c98", "c99");
      assertThat(responses(peer.ack(CDS))).isEmpty();
    }
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void deletedResourceGoesToRemovedResources(Variant v) {
    DeltaPeer peer = v.peer(EDS, config(endpoints("a", 1), endpoints("b", 2)));
    peer.subscribe(EDS, "a", "b");
    peer.ack(EDS);
    DeltaDiscoveryResponse r = single(peer.reload(config(endpoints("a", 1))));
    assertThat(r.getResourcesList()).isEmpty();
    assertThat(r.getRemovedResourcesList()).containsExactly("b");
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void missingResourceIsReportedPromptlyAndSentWhenItAppears(Variant v) {
    DeltaPeer peer = v.peer(EDS, config(endpoints("a", 1)));
    DeltaDiscoveryResponse r = single(peer.subscribe(EDS, "a", "ghost"));
    assertThat(names(r)).containsExactly("a");
    assertThat(r.getRemovedResourcesList()).containsExactly("ghost");
    peer.ack(EDS);
    // Said once: an unrelated reload does not repeat it.
    assertThat(responses(peer.reload(config(endpoints("a", 1), endpoints("other", 3))))).isEmpty();
    assertThat(names(single(peer.reload(config(endpoints("a", 1), endpoints("ghost", 9))))))
        .containsExactly("ghost");
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void subscribingToANameAlreadyHeldResendsIt(Variant v) {
    // Spec "Subscribing to Resources": the client may have forgotten it.
    DeltaPeer peer = v.peer(EDS, config(endpoints("a", 1)));
    peer.subscribe(EDS, "a");
    peer.ack(EDS);
    assertThat(names(single(peer.subscribe(EDS, "a")))).containsExactly("a");
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void resubscribingEverythingHeldResendsAllOfItEvenWhenLarge(Variant v) {
    // The same rule for a client (re)naming 100 endpoint sets at once, as a warming Envoy does
    // after its clusters changed; also when some were never held, and repeatedly.
    List<XdsResource> all = new java.util.ArrayList<>();
    String[] names = new String[100];
    for (int i = 0; i < 100; i++) {
      names[i] = "e" + i;
      all.add(endpoints(names[i], 1));
    }
    DeltaPeer peer = v.peer(EDS, config(all.toArray(XdsResource[]::new)));
    String[] firstHalf = java.util.Arrays.copyOf(names, 50);
    assertThat(names(single(peer.subscribe(EDS, firstHalf)))).hasSize(50);
    peer.ack(EDS);
    assertThat(names(single(peer.subscribe(EDS, names)))).hasSize(100); // 50 new, 50 held
    peer.ack(EDS);
    assertThat(names(single(peer.subscribe(EDS, names)))).hasSize(100).contains("e0", "e99");
    peer.ack(EDS);
    assertThat(names(single(peer.subscribe(EDS, names)))).hasSize(100);
    peer.ack(EDS);
    assertThat(responses(peer.ack(EDS))).isEmpty();
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void unsubscribingANameNeverSubscribedIsANoOp(Variant v) {
    // Spec "Unsubscribing from Resources": phantom unsubscriptions are ignored cleanly.
    DeltaPeer peer = v.peer(EDS, config(endpoints("a", 1)));
    peer.subscribe(EDS, "a");
    peer.ack(EDS);
    List<Outcome> out = peer.unsubscribe(EDS, "never");
    assertThat(out).isEmpty();
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void pureUnsubscribeNeedsNoResponse(Variant v) {
    DeltaPeer peer = v.peer(EDS, config(endpoints("a", 1), endpoints("b", 1)));
    peer.subscribe(EDS, "a", "b");
    peer.ack(EDS);
    assertThat(responses(peer.unsubscribe(EDS, "b"))).isEmpty();
    // And b's changes are no longer sent.
    assertThat(responses(peer.reload(config(endpoints("a", 1), endpoints("b", 5))))).isEmpty();
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void emptySubscriptionAfterNamesIsNotWildcard(Variant v) {
    DeltaPeer peer = v.peer(CDS, config(cluster("a"), cluster("b")));
    assertThat(names(single(peer.subscribe(CDS, "a")))).containsExactly("a");
    peer.ack(CDS);
    peer.unsubscribe(CDS, "a");
    assertThat(responses(peer.send(req(CDS)))).isEmpty();
    assertThat(responses(peer.reload(config(clusterWithTimeout("a", 2), cluster("b"), cluster("c")))))
        .isEmpty();
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void wildcardClientUnsubscribingANameCoveredByTheWildcardGetsItBack(Variant v) {
    // Spec "Unsubscribing from Resources": answer in resources if the wildcard still covers it.
    DeltaPeer peer = v.peer(CDS, config(cluster("a"), cluster("b")));
    peer.subscribe(CDS, "*", "a");
    peer.ack(CDS);
    DeltaDiscoveryResponse r = single(peer.unsubscribe(CDS, "a"));
    assertThat(names(r)).containsExactly("a");
    assertThat(r.getRemovedResourcesList()).isEmpty();
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void wildcardClientUnsubscribingANameOutsideTheWildcardGetsItsRemoval(Variant v) {
    DeltaPeer peer = v.peer(CDS, config(cluster("a")));
    peer.subscribe(CDS, "*", "ghost");
    peer.ack(CDS);
    DeltaDiscoveryResponse r = single(peer.unsubscribe(CDS, "ghost"));
    assertThat(r.getResourcesList()).isEmpty();
    assertThat(r.getRemovedResourcesList()).containsExactly("ghost");
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void aNameDroppedUnderTheWildcardIsNotAnsweredOnceTheWildcardGoesToo(Variant v) {
    // Spec "Incremental xDS": a wildcard client dropping a name is answered with the resource or
    // its removal, since it cannot tell whether the wildcard still covers it; once it drops the
    // wildcard as well it holds nothing of either, and a later change says nothing about them.
    // (Found by fuzzing: the answer stayed pending and went out with the next change.)
    DeltaPeer peer = v.peer(CDS, config(cluster("a"), cluster("b")));
    peer.subscribe(CDS, "*", "a");
    peer.subscribe(CDS, "b"); // while the first response is in flight
    peer.unsubscribe(CDS, "a"); // owes an answer about a...
    peer.unsubscribe(CDS, "*", "b"); // ...until the wildcard goes too
    assertThat(responses(peer.ack(CDS))).isEmpty();
    assertThat(responses(peer.reload(config()))).isEmpty();
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void explicitWildcardUnsubscribeKeepsNamedResources(Variant v) {
    // Spec example: unsubscribe "*" and keep the subscription to A.
    DeltaPeer peer = v.peer(CDS, config(cluster("a"), cluster("b")));
    peer.send(req(CDS));
    peer.ack(CDS);
    peer.subscribe(CDS, "a");
    peer.ack(CDS);
    assertThat(responses(peer.unsubscribe(CDS, "*"))).isEmpty();
    assertThat(responses(peer.reload(config(cluster("a"), clusterWithTimeout("b", 2))))).isEmpty();
    assertThat(names(single(peer.reload(config(clusterWithTimeout("a", 2), clusterWithTimeout("b", 2))))))
        .containsExactly("a");
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void nackedResourceVersionIsNotResent(Variant v) {
    DeltaPeer peer = v.peer(CDS, config(cluster("a"), cluster("b")));
    peer.subscribe(CDS, "*");
    peer.ack(CDS);
    peer.reload(config(clusterWithTimeout("a", 99), cluster("b")));
    List<Outcome> out = peer.nack(CDS, "bad timeout");
    assertThat(responses(out)).isEmpty();
    assertThat(out).anySatisfy(o -> assertThat(o).isInstanceOfSatisfying(Outcome.Nacked.class,
        n -> assertThat(n.nack().message()).isEqualTo("bad timeout")));
    // Another resource changing sends only that one; a is sent again only when it changes.
    assertThat(names(single(peer.reload(config(clusterWithTimeout("a", 99), clusterWithTimeout("b", 1))))))
        .containsExactly("b");
    peer.ack(CDS);
    assertThat(names(single(peer.reload(config(clusterWithTimeout("a", 3), clusterWithTimeout("b", 1))))))
        .containsExactly("a");
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void unknownNonceNeverBreaksTheStreamAndSubscriptionsStillCount(Variant v) {
    // java-control-plane closed the stream on an unknown nonce.
    DeltaPeer peer = v.peer(EDS, config(endpoints("a", 1), endpoints("b", 2)));
    peer.subscribe(EDS, "a");
    peer.ack(EDS);
    List<Outcome> out = peer.send(req(EDS).setResponseNonce("bogus").addResourceNamesSubscribe("b"));
    assertThat(out).noneMatch(o -> o instanceof Outcome.Close);
    assertThat(names(single(out))).containsExactly("b");
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void changesWhileUnackedCoalesce(Variant v) {
    DeltaPeer peer = v.peer(EDS, config(endpoints("a", 1)));
    peer.subscribe(EDS, "a");
    assertThat(responses(peer.reload(config(endpoints("a", 2))))).isEmpty();
    assertThat(responses(peer.reload(config(endpoints("a", 3), endpoints("x", 1))))).isEmpty();
    DeltaDiscoveryResponse r = single(peer.ack(EDS));
    assertThat(r.getResourcesList()).singleElement()
        .satisfies(res -> assertThat(res.getVersion()).isEqualTo(endpoints("a", 3).version()));
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void initialResourceVersionsSkipWhatTheClientHolds(Variant v) {
    // Spec "Incremental xDS": a reconnecting client lists what it holds. java-control-plane
    // ignored this after a restart and resent everything.
    ServedConfig cfg = config(cluster("same"), clusterWithTimeout("changed", 2), cluster("new"));
    DeltaPeer peer = v.peer(CDS, cfg);
    DeltaDiscoveryResponse r = single(peer.send(req(CDS).addResourceNamesSubscribe("*")
        .putInitialResourceVersions("same", cluster("same").version())
        .putInitialResourceVersions("changed", clusterWithTimeout("changed", 1).version())
        .putInitialResourceVersions("gone", cluster("gone").version())));
    assertThat(names(r)).containsExactlyInAnyOrder("changed", "new");
    assertThat(r.getRemovedResourcesList()).containsExactly("gone");
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void reconnectHoldingEverythingGetsNothing(Variant v) {
    ServedConfig cfg = config(endpoints("a", 1), endpoints("b", 2));
    DeltaPeer peer = v.peer(EDS, cfg);
    assertThat(responses(peer.send(req(EDS).addResourceNamesSubscribe("a").addResourceNamesSubscribe("b")
        .putInitialResourceVersions("a", endpoints("a", 1).version())
        .putInitialResourceVersions("b", endpoints("b", 2).version())))).isEmpty();
  }

  /** Issue 21: a client resumed on another replica shows in sync (/clients), not only quiet. */
  @ParameterizedTest
  @EnumSource(Variant.class)
  void reconnectHoldingEverythingRunsWhatItHolds(Variant v) {
    ServedConfig cfg = config(endpoints("a", 1), endpoints("b", 2));
    DeltaPeer peer = v.peer(EDS, cfg);
    peer.send(req(EDS).addResourceNamesSubscribe("a").addResourceNamesSubscribe("b")
        .putInitialResourceVersions("a", endpoints("a", 1).version())
        .putInitialResourceVersions("b", endpoints("b", 2).version()));
    XdsStream.TypeStatus status = peer.stream.status().stream()
        .filter(s -> s.type() == EDS).findFirst().orElseThrow();
    assertThat(status.ackedResourceVersions()).containsEntry("a", endpoints("a", 1).version())
        .containsEntry("b", endpoints("b", 2).version());
    assertThat(status.pendingNonce()).isNull();
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void listenersAndClustersAreNotHardWiredAsWildcard(Variant v) {
    // java-control-plane served every CDS/LDS resource to Delta clients whatever they asked.
    DeltaPeer peer = v.peer(CDS, config(cluster("a"), cluster("b"), cluster("c")));
    assertThat(names(single(peer.subscribe(CDS, "b")))).containsExactly("b");
  }

  @Test
  void onDemandSubscriptionMidStreamTouchesNothingElse() {
    DeltaPeer peer = Variant.DELTA_ADS.peer(CDS, config(cluster("a"), cluster("b"), listener("l")));
    peer.subscribe(ResourceType.LISTENER, "*");
    peer.ack(ResourceType.LISTENER);
    peer.subscribe(CDS, "a");
    peer.ack(CDS);
    DeltaDiscoveryResponse r = single(peer.subscribe(CDS, "b"));
    assertThat(names(r)).containsExactly("b");
    assertThat(r.getTypeUrl()).isEqualTo(CDS.typeUrl());
  }

  @Test
  void noNameAppearsTwiceOrInBothLists() {
    DeltaPeer peer = Variant.DELTA_ADS.peer(CDS, config(cluster("a")));
    peer.subscribe(CDS, "*", "a", "ghost");
    peer.ack(CDS);
    DeltaDiscoveryResponse r = single(peer.reload(config(clusterWithTimeout("a", 5), cluster("ghost"))));
    Set<String> seen = new HashSet<>();
    for (Resource res : r.getResourcesList()) {
      assertThat(seen.add(res.getName())).as("duplicate %s", res.getName()).isTrue();
    }
    assertThat(r.getRemovedResourcesList()).doesNotContainAnyElementsOf(seen);
    assertThat(seen).containsExactlyInAnyOrder("a", "ghost");
  }

  // --- VHDS ---

  static XdsResource vhost(String name, String... domains) {
    return XdsResource.of(ResourceType.VIRTUAL_HOST,
        VirtualHost.newBuilder().setName(name).addAllDomains(List.of(domains)).build());
  }

  @Test
  void virtualHostIsSubscribedByAliasAndAnsweredWithItsAliases() {
    DeltaPeer peer = Variant.DELTA_PER_TYPE.peer(ResourceType.VIRTUAL_HOST,
        config(vhost("rc/shop", "shop.example.com", "www.shop.example.com")));
    DeltaDiscoveryResponse r = single(peer.subscribe(ResourceType.VIRTUAL_HOST, "rc/shop.example.com"));
    Resource res = r.getResources(0);
    assertThat(res.getName()).isEqualTo("rc/shop");
    assertThat(res.getAliasesList()).contains("rc/shop.example.com");
    assertThat(res.hasResource()).isTrue();
  }

  @Test
  void unresolvableAliasIsAnsweredWithABodylessResource() {
    DeltaPeer peer = Variant.DELTA_ADS.peer(ResourceType.VIRTUAL_HOST, config(vhost("rc/shop", "shop.example.com")));
    DeltaDiscoveryResponse r = single(peer.subscribe(ResourceType.VIRTUAL_HOST, "rc/unknown.example.com"));
    Resource res = r.getResources(0);
    assertThat(res.getName()).isEqualTo("rc/unknown.example.com");
    assertThat(res.getAliasesList()).containsExactly("rc/unknown.example.com");
    assertThat(res.hasResource()).isFalse();
    peer.ack(ResourceType.VIRTUAL_HOST);
    // When a virtual host comes to serve that domain, it is sent.
    DeltaDiscoveryResponse later = single(peer.reload(config(vhost("rc/shop", "shop.example.com"),
        vhost("rc/other", "unknown.example.com"))));
    assertThat(later.getResources(0).getName()).isEqualTo("rc/other");
  }

  @Test
  void virtualHostsAreServedOverDeltaButNotSotw() {
    DeltaPeer peer = Variant.DELTA_ADS.peer(ResourceType.VIRTUAL_HOST, config(vhost("rc/a", "a")));
    assertThat(peer.subscribe(ResourceType.VIRTUAL_HOST, "rc/a")).noneMatch(o -> o instanceof Outcome.Close);
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void responsesListResourcesAndRemovalsInNameOrder(Variant v) {
    // Issue 19: equal states send equal bytes, so a response is not in some set's hash order.
    List<XdsResource> all = new java.util.ArrayList<>();
    for (int i = 0; i < 30; i++) {
      all.add(endpoints("e" + i, 1));
    }
    DeltaPeer peer = v.peer(EDS, config(all.toArray(XdsResource[]::new)));
    String[] asked = java.util.stream.IntStream.range(0, 25).mapToObj(i -> "e" + (24 - i))
        .toArray(String[]::new);
    assertThat(names(single(peer.subscribe(EDS, asked)))).hasSize(25).isSorted();
    peer.ack(EDS);
    // Half of them go away: their removals, too, come in name order.
    assertThat(single(peer.reload(config(all.subList(0, 12).toArray(XdsResource[]::new))))
        .getRemovedResourcesList()).hasSize(13).isSorted();
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void wildcardRemovalsComeInNameOrder(Variant v) {
    // Issue 19: the same state sends the same bytes; removals too are in name order.
    List<XdsResource> all = new java.util.ArrayList<>();
    for (int i = 0; i < 30; i++) {
      all.add(cluster("c" + i));
    }
    DeltaPeer peer = v.peer(CDS, config(all.toArray(XdsResource[]::new)));
    peer.subscribe(CDS, "*");
    peer.ack(CDS);
    assertThat(single(peer.reload(config(all.subList(0, 12).toArray(XdsResource[]::new))))
        .getRemovedResourcesList()).hasSize(18).isSorted();
  }
}
