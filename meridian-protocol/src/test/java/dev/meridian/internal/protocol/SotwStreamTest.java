package dev.meridian.internal.protocol;

import dev.meridian.xds.ResourceType;

import static dev.meridian.internal.protocol.Fixtures.cluster;
import static dev.meridian.internal.protocol.Fixtures.clusterWithTimeout;
import static dev.meridian.internal.protocol.Fixtures.config;
import static dev.meridian.internal.protocol.Fixtures.endpoints;
import static dev.meridian.internal.protocol.Fixtures.listener;
import static dev.meridian.internal.protocol.Fixtures.names;
import static dev.meridian.internal.protocol.Fixtures.request;
import static dev.meridian.internal.protocol.SotwPeer.responses;
import static dev.meridian.internal.protocol.SotwPeer.single;
import static org.assertj.core.api.Assertions.assertThat;

import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** State-of-the-World scenarios on the pure core, each across ADS and the per-type service. */
class SotwStreamTest {
  enum Variant {
    ADS, PER_TYPE;

    SotwPeer peer(ResourceType type, ServedConfig config) {
      return new SotwPeer(this == ADS, type, config);
    }
  }

  static final ResourceType CDS = ResourceType.CLUSTER;
  static final ResourceType EDS = ResourceType.ENDPOINT;
  static final ResourceType LDS = ResourceType.LISTENER;

  // --- responses and what they carry ---

  @ParameterizedTest
  @EnumSource(Variant.class)
  void legacyWildcardRequestGetsEveryCluster(Variant v) {
    SotwPeer peer = v.peer(CDS, config(cluster("a"), cluster("b")));
    DiscoveryResponse r = single(peer.subscribe(CDS));
    assertThat(names(r)).containsExactly("a", "b");
    assertThat(r.getTypeUrl()).isEqualTo(CDS.typeUrl());
    assertThat(r.getNonce()).isNotEmpty();
    // version_info comes from the type's content and the subscription: another client with the
    // same subscription sees the same version, one with another subscription another version.
    assertThat(single(v.peer(CDS, peer.config).subscribe(CDS)).getVersionInfo())
        .isEqualTo(r.getVersionInfo());
    assertThat(single(v.peer(CDS, peer.config).subscribe(CDS, "a")).getVersionInfo())
        .isNotEqualTo(r.getVersionInfo());
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void explicitWildcardIsNotALiteralName(Variant v) {
    // java-control-plane treated "*" as a resource literally named "*" and sent nothing.
    SotwPeer peer = v.peer(CDS, config(cluster("a"), cluster("b")));
    assertThat(names(single(peer.subscribe(CDS, "*")))).containsExactly("a", "b");
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void wildcardMixedWithNamesCoversBoth(Variant v) {
    // Spec "How the client specifies what resources to return": "*" and A together.
    SotwPeer peer = v.peer(CDS, config(cluster("a"), cluster("b")));
    peer.subscribe(CDS, "*", "a");
    peer.ack(CDS, "*", "a");
    // Dropping "*" keeps A. The client dropped b itself: nothing to send for that.
    assertThat(responses(peer.subscribe(CDS, "a"))).isEmpty();
    // A change to b is no longer of interest; a change to a is sent, as the full state {a}.
    assertThat(responses(peer.reload(config(cluster("a"), clusterWithTimeout("b", 3))))).isEmpty();
    assertThat(names(single(peer.reload(config(clusterWithTimeout("a", 3), cluster("b"))))))
        .containsExactly("a");
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void emptyListAfterNamesUnsubscribesFromAll(Variant v) {
    // Spec example: an empty list after explicit names is an unsubscription, not a wildcard.
    // grpc-java sends exactly this when its last watcher of a type goes away.
    SotwPeer peer = v.peer(CDS, config(cluster("a"), cluster("b")));
    assertThat(names(single(peer.subscribe(CDS, "a")))).containsExactly("a");
    peer.ack(CDS, "a");
    assertThat(responses(peer.ack(CDS))).isEmpty();
    assertThat(responses(peer.reload(config(clusterWithTimeout("a", 2), cluster("b"), cluster("c")))))
        .isEmpty();
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void listenerAndClusterResponsesCarryTheFullState(Variant v) {
    // Spec "Grouping Resources into Responses": LDS/CDS responses include every subscribed resource.
    SotwPeer peer = v.peer(CDS, config(cluster("a"), cluster("b"), cluster("c")));
    peer.subscribe(CDS);
    peer.ack(CDS);
    DiscoveryResponse r = single(peer.reload(config(cluster("a"), clusterWithTimeout("b", 5), cluster("c"))));
    assertThat(names(r)).containsExactly("a", "b", "c");
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void deletedClusterIsAbsentFromTheNextFullStateResponse(Variant v) {
    // Spec "Deleting Resources": for LDS/CDS, absence from a response means deletion.
    SotwPeer peer = v.peer(CDS, config(cluster("a"), cluster("b")));
    peer.subscribe(CDS);
    peer.ack(CDS);
    assertThat(names(single(peer.reload(config(cluster("a")))))).containsExactly("a");
    peer.ack(CDS);
    assertThat(single(peer.reload(config())).getResourcesList()).isEmpty();
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void endpointResponsesCarryOnlyWhatChanged(Variant v) {
    // Spec "Grouping Resources into Responses": other types are grouped as in incremental xDS.
    SotwPeer peer = v.peer(EDS, config(endpoints("a", 1), endpoints("b", 2), endpoints("c", 3)));
    assertThat(names(single(peer.subscribe(EDS, "a", "b", "c")))).containsExactly("a", "b", "c");
    peer.ack(EDS, "a", "b", "c");
    DiscoveryResponse r = single(peer.reload(config(endpoints("a", 1), endpoints("b", 20), endpoints("c", 3))));
    assertThat(names(r)).containsExactly("b");
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void newlyRequestedNamesAreResentEvenIfSentBefore(Variant v) {
    // Spec: "the server must resend any newly requested resources, even if it previously sent those".
    SotwPeer peer = v.peer(EDS, config(endpoints("a", 1), endpoints("b", 2)));
    peer.subscribe(EDS, "a", "b");
    peer.ack(EDS, "a", "b");
    assertThat(responses(peer.ack(EDS, "a"))).isEmpty(); // dropping b needs no response
    assertThat(names(single(peer.ack(EDS, "a", "b")))).containsExactly("b");
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void requestedResourceThatDoesNotExistIsSentWhenItAppears(Variant v) {
    // Spec "Knowing When a Requested Resource Does Not Exist": the server remembers the interest.
    SotwPeer peer = v.peer(EDS, config(endpoints("a", 1)));
    peer.subscribe(EDS, "a", "later");
    peer.ack(EDS, "a", "later");
    DiscoveryResponse r = single(peer.reload(config(endpoints("a", 1), endpoints("later", 9))));
    assertThat(names(r)).containsExactly("later");
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void fullStateTypeAnswersAFirstRequestForMissingNames(Variant v) {
    // An empty LDS response lets a client that named its listener (gRPC) conclude it does not
    // exist without waiting for its timer.
    SotwPeer peer = v.peer(LDS, config(listener("other")));
    DiscoveryResponse r = single(peer.subscribe(LDS, "missing"));
    assertThat(r.getResourcesList()).isEmpty();
    peer.ack(LDS, "missing");
    assertThat(names(single(peer.reload(config(listener("other"), listener("missing"))))))
        .containsExactly("missing");
  }

  // --- only changes are sent ---

  @ParameterizedTest
  @EnumSource(Variant.class)
  void ackSendsNothing(Variant v) {
    SotwPeer peer = v.peer(CDS, config(cluster("a")));
    peer.subscribe(CDS);
    assertThat(responses(peer.ack(CDS))).isEmpty();
    assertThat(peer.outcomes).anyMatch(o -> o instanceof Outcome.Ack);
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void repeatedRequestAtTheCurrentVersionSendsNothing(Variant v) {
    SotwPeer peer = v.peer(EDS, config(endpoints("a", 1)));
    peer.subscribe(EDS, "a");
    peer.ack(EDS, "a");
    assertThat(responses(peer.ack(EDS, "a"))).isEmpty();
    assertThat(responses(peer.subscribe(EDS, "a"))).isEmpty();
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void identicalReloadSendsNothing(Variant v) {
    SotwPeer peer = v.peer(CDS, config(cluster("a")));
    peer.subscribe(CDS);
    peer.ack(CDS);
    assertThat(responses(peer.reload(config(cluster("a"))))).isEmpty();
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void changesWhileAResponseIsUnackedCoalesceIntoOne(Variant v) {
    // DESIGN "Flow control": at most one un-ACKed response per (stream, type).
    SotwPeer peer = v.peer(EDS, config(endpoints("a", 1)));
    peer.subscribe(EDS, "a");
    assertThat(responses(peer.reload(config(endpoints("a", 2))))).isEmpty();
    assertThat(responses(peer.reload(config(endpoints("a", 3))))).isEmpty();
    DiscoveryResponse r = single(peer.ack(EDS, "a"));
    assertThat(r.getResources(0)).isEqualTo(endpoints("a", 3).any());
  }

  // --- nonces, ACK and NACK ---

  @ParameterizedTest
  @EnumSource(Variant.class)
  void requestWithStaleNonceIsIgnored(Variant v) {
    // Spec "Resource updates": no response to a request with a stale nonce.
    SotwPeer peer = v.peer(EDS, config(endpoints("a", 1), endpoints("b", 2)));
    DiscoveryResponse first = single(peer.subscribe(EDS, "a"));
    peer.ack(EDS, "a");
    peer.reload(config(endpoints("a", 5), endpoints("b", 2)));
    List<Outcome> out = peer.send(request(EDS, "a", "b").setResponseNonce(first.getNonce())
        .setVersionInfo(first.getVersionInfo()));
    assertThat(responses(out)).isEmpty();
    assertThat(out).singleElement().isInstanceOf(Outcome.Ignored.class);
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void nackedVersionIsNotResent(Variant v) {
    // java-control-plane resent a NACKed snapshot on every request: a NACK loop.
    SotwPeer peer = v.peer(CDS, config(cluster("a")));
    peer.subscribe(CDS);
    peer.ack(CDS);
    DiscoveryResponse bad = single(peer.reload(config(clusterWithTimeout("a", 99))));
    List<Outcome> out = peer.nack(CDS, "connect_timeout too large");
    assertThat(responses(out)).isEmpty();
    Nack nack = out.stream().filter(o -> o instanceof Outcome.Nacked)
        .map(o -> ((Outcome.Nacked) o).nack()).findFirst().orElseThrow();
    assertThat(nack.message()).isEqualTo("connect_timeout too large");
    assertThat(nack.rejectedVersion()).isEqualTo(bad.getVersionInfo());
    assertThat(nack.nodeId()).isEqualTo("node-1");
    assertThat(nack.type()).isEqualTo(CDS);
    // The client keeps asking at its old version: still nothing.
    assertThat(responses(peer.subscribe(CDS))).isEmpty();
    // An identical reload is not a change either.
    assertThat(responses(peer.reload(config(clusterWithTimeout("a", 99))))).isEmpty();
    // A real change is sent.
    assertThat(names(single(peer.reload(config(clusterWithTimeout("a", 4)))))).containsExactly("a");
  }

  @Test
  void nackMessageIsBounded() {
    SotwPeer peer = Variant.ADS.peer(CDS, config(cluster("a")));
    peer.subscribe(CDS);
    List<Outcome> out = peer.nack(CDS, "x".repeat(100_000));
    Nack nack = ((Outcome.Nacked) out.get(0)).nack();
    assertThat(nack.message().length()).isLessThan(Nack.MAX_MESSAGE + 100);
  }

  // --- reconnects and versions ---

  @ParameterizedTest
  @EnumSource(Variant.class)
  void reconnectAtTheCurrentVersionSendsNothing(Variant v) {
    // Spec "Versioning and Node Identifier": a new stream's first request carries the last version.
    ServedConfig cfg = config(endpoints("a", 1), endpoints("b", 2));
    SotwPeer before = v.peer(EDS, cfg);
    DiscoveryResponse r = single(before.subscribe(EDS, "a", "b"));
    SotwPeer after = v.peer(EDS, cfg);
    assertThat(responses(after.send(request(EDS, "a", "b").setVersionInfo(r.getVersionInfo()))))
        .isEmpty();
    // ...and the new stream still sends real changes.
    assertThat(names(single(after.reload(config(endpoints("a", 1), endpoints("b", 7))))))
        .containsExactly("b");
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void reconnectAfterAChangeToAResourceItDoesNotNameSendsNothing(Variant v) {
    // Issue 21: a named subscription's version_info is its view's, not the whole type's. The
    // client was never sent the change to b, so its version still says what it holds; a replica
    // already serving that change owes it nothing.
    SotwPeer before = v.peer(EDS, config(endpoints("a", 1), endpoints("b", 2)));
    DiscoveryResponse r = single(before.subscribe(EDS, "a"));
    before.ack(EDS, "a");
    ServedConfig changed = config(endpoints("a", 1), endpoints("b", 7));
    assertThat(responses(before.reload(changed))).isEmpty();
    SotwPeer after = v.peer(EDS, changed);
    assertThat(responses(after.send(request(EDS, "a").setVersionInfo(r.getVersionInfo()))))
        .isEmpty();
    // A change to what it names is still sent, and only that.
    assertThat(names(single(after.reload(config(endpoints("a", 3), endpoints("b", 7))))))
        .containsExactly("a");
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void reconnectCarryingTheOldStreamsNonceIsStillAnswered(Variant v) {
    // A nonce this stream never sent supersedes nothing: ignoring it would leave the client waiting.
    ServedConfig cfg = config(endpoints("a", 1), endpoints("b", 2));
    DiscoveryResponse r = single(v.peer(EDS, cfg).subscribe(EDS, "a"));
    SotwPeer same = v.peer(EDS, cfg);
    assertThat(responses(same.send(request(EDS, "a").setVersionInfo(r.getVersionInfo())
        .setResponseNonce(r.getNonce())))).isEmpty();
    SotwPeer older = v.peer(EDS, config(endpoints("a", 5), endpoints("b", 2)));
    assertThat(names(single(older.send(request(EDS, "a").setVersionInfo(r.getVersionInfo())
        .setResponseNonce(r.getNonce()))))).containsExactly("a");
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void reconnectAfterAChangeToANamedResourceGetsIt(Variant v) {
    SotwPeer before = v.peer(EDS, config(endpoints("a", 1), endpoints("b", 2)));
    DiscoveryResponse r = single(before.subscribe(EDS, "a", "b"));
    SotwPeer after = v.peer(EDS, config(endpoints("a", 1), endpoints("b", 7)));
    // The version says {a@1, b@2}: the client lacks b@7. (SotW cannot name what differs, so the
    // request is answered as a first one: both names.)
    assertThat(names(single(after.send(request(EDS, "a", "b").setVersionInfo(r.getVersionInfo())))))
        .containsExactly("a", "b");
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void namedSubscriptionOfEveryResourceHasTheWildcardsViewVersion(Variant v) {
    // The view-version of every resource of the type is the type's version: the same names give
    // the same version whether or not they happen to be all there is.
    ServedConfig cfg = config(endpoints("a", 1), endpoints("b", 2));
    DiscoveryResponse all = single(v.peer(EDS, cfg).subscribe(EDS, "a", "b"));
    DiscoveryResponse more = single(v.peer(EDS, config(endpoints("a", 1), endpoints("b", 2),
        endpoints("c", 3))).subscribe(EDS, "a", "b"));
    assertThat(more.getVersionInfo()).isEqualTo(all.getVersionInfo());
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void reconnectAtAnOlderVersionGetsTheCurrentState(Variant v) {
    SotwPeer before = v.peer(CDS, config(cluster("a")));
    DiscoveryResponse old = single(before.subscribe(CDS));
    SotwPeer after = v.peer(CDS, config(cluster("a"), cluster("b")));
    DiscoveryResponse r = single(after.send(request(CDS).setVersionInfo(old.getVersionInfo())));
    assertThat(names(r)).containsExactly("a", "b");
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void reconnectWithANewNameIsAnswered(Variant v) {
    // Spec: skipping the resend is safe only if the client subscribes to nothing new.
    ServedConfig cfg = config(endpoints("a", 1), endpoints("b", 2));
    DiscoveryResponse r = single(v.peer(EDS, cfg).subscribe(EDS, "a"));
    SotwPeer after = v.peer(EDS, cfg);
    DiscoveryResponse again = single(after.send(request(EDS, "a", "b").setVersionInfo(r.getVersionInfo())));
    assertThat(names(again)).containsExactly("a", "b");
  }

  @Test
  void versionsComeFromContentAndAreStable() {
    // Same content, separately built: same version. A fixed value guards against anything
    // per-JVM (hashCode, identity) creeping into versions.
    assertThat(cluster("a").version()).isEqualTo(cluster("a").version());
    assertThat(cluster("a").version()).isNotEqualTo(cluster("b").version());
    assertThat(cluster("a").version()).isEqualTo(
        Versions.ofBytes(XdsResource.deterministicBytes(cluster("a").message())));
    assertThat(clusterWithTimeout("a", 1).version()).isEqualTo("ef41eea44cb3ea36");
  }

  @Test
  void eachVersionIsSerializedOnceHoweverManyStreamsReceiveIt() {
    // An XdsResource is serialized once, when it is built: its Any. Every response carries that
    // very Any, whichever stream it goes to; nothing is re-encoded per stream or per response.
    ServedConfig cfg = config(cluster("a"), cluster("b"));
    List<com.google.protobuf.Any> built = List.of(cfg.defaults().get(CDS).get("a").any(),
        cfg.defaults().get(CDS).get("b").any());
    for (int i = 0; i < 50; i++) {
      for (Variant v : Variant.values()) {
        DiscoveryResponse r = single(v.peer(CDS, cfg).subscribe(CDS));
        assertThat(r.getResourcesCount()).isEqualTo(2);
        assertThat(r.getResources(0)).isSameAs(built.get(0));
        assertThat(r.getResources(1)).isSameAs(built.get(1));
      }
    }
  }

  // --- groups ---

  @ParameterizedTest
  @EnumSource(Variant.class)
  void nodesGetTheirGroupsResources(Variant v) {
    ServedConfig cfg = new ServedConfig(Snapshot.of(List.of(cluster("default-only"))), List.of(
        new ServedConfig.Group("canary", new NodeMatcher("canary-*", null),
            Snapshot.of(List.of(cluster("canary-only"))))));
    SotwPeer canary = v.peer(CDS, cfg);
    canary.nodeId = "canary-7";
    assertThat(names(single(canary.subscribe(CDS)))).containsExactly("canary-only");
    SotwPeer other = v.peer(CDS, cfg);
    assertThat(names(single(other.subscribe(CDS)))).containsExactly("default-only");
    assertThat(canary.stream.group()).isEqualTo("canary");
    assertThat(other.stream.group()).isEqualTo(ServedConfig.DEFAULT_GROUP);
  }

  // --- bad requests close only their stream ---

  @Test
  void adsRequestWithoutTypeUrlClosesTheStream() {
    SotwPeer peer = Variant.ADS.peer(CDS, config(cluster("a")));
    List<Outcome> out = peer.send(DiscoveryRequest.newBuilder());
    assertThat(out).singleElement().isInstanceOfSatisfying(Outcome.Close.class, c -> {
      assertThat(c.code()).isEqualTo(Outcome.CloseCode.INVALID_ARGUMENT);
      assertThat(c.message()).contains("type_url is required");
    });
  }

  @Test
  void adsRequestWithGarbageTypeUrlClosesTheStream() {
    SotwPeer peer = Variant.ADS.peer(CDS, config(cluster("a")));
    List<Outcome> out = peer.send(DiscoveryRequest.newBuilder().setTypeUrl("type.googleapis.com/nope"));
    assertThat(out).singleElement().isInstanceOfSatisfying(Outcome.Close.class,
        c -> assertThat(c.message()).contains("unknown type_url 'type.googleapis.com/nope'"));
    assertThat(peer.send(request(CDS))).isEmpty(); // closed: nothing more happens
  }

  @Test
  void perTypeRequestForAnotherTypeClosesTheStream() {
    SotwPeer peer = Variant.PER_TYPE.peer(CDS, config(cluster("a")));
    DiscoveryRequest wrongType = request(EDS).setNode(Fixtures.node("n")).build();
    List<Outcome> out = SameOutcomes.check(peer.stream.onRequest(wrongType, peer.config),
        peer.plain.onRequest(wrongType, peer.config));
    assertThat(out).singleElement().isInstanceOfSatisfying(Outcome.Close.class,
        c -> assertThat(c.message()).contains("does not match this service"));
  }

  @Test
  void firstRequestWithoutNodeClosesTheStream() {
    TwinStream<DiscoveryRequest> s = TwinStream.sotwAds(java.time.Clock.systemUTC());
    List<Outcome> out = s.onRequest(request(CDS).build(), config(cluster("a")));
    assertThat(out).singleElement().isInstanceOfSatisfying(Outcome.Close.class,
        c -> assertThat(c.message()).contains("must carry a node"));
  }

  @Test
  void virtualHostsAreNotServedOverSotw() {
    SotwPeer peer = Variant.ADS.peer(CDS, config());
    List<Outcome> out = peer.send(request(ResourceType.VIRTUAL_HOST, "rc/host"));
    assertThat(out).singleElement().isInstanceOfSatisfying(Outcome.Close.class,
        c -> assertThat(c.message()).contains("Incremental"));
  }

  @Test
  void laterRequestsMayOmitTheNode() {
    SotwPeer peer = Variant.ADS.peer(CDS, config(cluster("a")));
    peer.subscribe(CDS);
    // SotwPeer only sets the node on the first request.
    assertThat(peer.subscribe(EDS, "a")).noneMatch(o -> o instanceof Outcome.Close);
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void responsesListResourcesInNameOrder(Variant v) {
    // Issue 19: equal states send equal bytes, so a response is not in some set's hash order.
    List<XdsResource> all = new java.util.ArrayList<>();
    for (int i = 0; i < 30; i++) {
      all.add(endpoints("e" + i, 1));
    }
    SotwPeer peer = v.peer(EDS, config(all.toArray(XdsResource[]::new)));
    String[] asked = java.util.stream.IntStream.range(0, 25).mapToObj(i -> "e" + (24 - i))
        .toArray(String[]::new);
    assertThat(names(single(peer.subscribe(EDS, asked)))).hasSize(25).isSorted();
    peer.ack(EDS, asked);
    List<XdsResource> changed = new java.util.ArrayList<>();
    for (int i = 0; i < 30; i++) {
      changed.add(endpoints("e" + i, i % 2 == 0 ? 2 : 1));
    }
    assertThat(names(single(peer.reload(config(changed.toArray(XdsResource[]::new))))))
        .hasSize(13).isSorted();
  }
}
