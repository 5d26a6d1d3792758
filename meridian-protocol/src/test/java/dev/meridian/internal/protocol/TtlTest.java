package dev.meridian.internal.protocol;

import dev.meridian.xds.ResourceType;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.protobuf.Duration;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Spec "TTL": wrapping, feature gating and heartbeats, with an injected clock; each stream with a
 * plain twin (see {@link TwinStream}).
 */
class TtlTest {
  final MutableClock clock = new MutableClock();

  static XdsResource withTtl(String name, int ttlSeconds) {
    return XdsResource.of(ResourceType.CLUSTER, Cluster.newBuilder().setName(name).build(),
        Duration.newBuilder().setSeconds(ttlSeconds).build(), List.of());
  }

  static Node node(String... features) {
    return Node.newBuilder().setId("n").addAllClientFeatures(List.of(features)).build();
  }

  static DiscoveryResponse sotw(List<Outcome> out) {
    assertThat(out).filteredOn(o -> o instanceof Outcome.Send).hasSize(1);
    return (DiscoveryResponse) ((Outcome.Send) out.stream().filter(o -> o instanceof Outcome.Send)
        .findFirst().orElseThrow()).response();
  }

  static DeltaDiscoveryResponse delta(List<Outcome> out) {
    assertThat(out).filteredOn(o -> o instanceof Outcome.Send).hasSize(1);
    return (DeltaDiscoveryResponse) ((Outcome.Send) out.stream().filter(o -> o instanceof Outcome.Send)
        .findFirst().orElseThrow()).response();
  }

  static DiscoveryRequest.Builder cds() {
    return DiscoveryRequest.newBuilder().setTypeUrl(ResourceType.CLUSTER.typeUrl());
  }

  static DiscoveryRequest ack(DiscoveryResponse r) {
    return cds().setVersionInfo(r.getVersionInfo()).setResponseNonce(r.getNonce()).build();
  }

  @Test
  void sotwClientWithBothFeaturesGetsTheResourceWrappedWithItsTtl() throws Exception {
    ServedConfig cfg = Fixtures.config(withTtl("temp", 30), Fixtures.cluster("plain"));
    TwinStream<DiscoveryRequest> s = TwinStream.sotwAds(clock);
    DiscoveryResponse r = sotw(s.onRequest(cds().setNode(node(ClientFeatures.RESOURCE_TTL,
        ClientFeatures.RESOURCE_IN_SOTW)).build(), cfg));
    Any plain = r.getResources(0);
    Any wrapped = r.getResources(1);
    assertThat(plain.is(Cluster.class)).isTrue();
    assertThat(wrapped.is(Resource.class)).isTrue();
    Resource res = wrapped.unpack(Resource.class);
    assertThat(res.getName()).isEqualTo("temp");
    assertThat(res.getTtl().getSeconds()).isEqualTo(30);
    assertThat(res.getResource().unpack(Cluster.class).getName()).isEqualTo("temp");
  }

  @Test
  void specSpellingOfTheResourceInSotwFeatureIsAcceptedToo() {
    ServedConfig cfg = Fixtures.config(withTtl("temp", 30));
    DiscoveryResponse r = sotw(TwinStream.sotwAds(clock).onRequest(cds().setNode(node(
        ClientFeatures.RESOURCE_TTL, ClientFeatures.RESOURCE_IN_SOTW_SPEC)).build(), cfg));
    assertThat(r.getResources(0).is(Resource.class)).isTrue();
  }

  @Test
  void clientsWithoutTheFeaturesGetThePlainResource() {
    ServedConfig cfg = Fixtures.config(withTtl("temp", 30));
    DiscoveryResponse r = sotw(TwinStream.sotwAds(clock).onRequest(
        cds().setNode(node(ClientFeatures.RESOURCE_TTL)).build(), cfg));
    assertThat(r.getResources(0).is(Cluster.class)).isTrue();
    DeltaDiscoveryResponse d = delta(TwinStream.deltaAds(clock).onRequest(DeltaDiscoveryRequest.newBuilder()
        .setTypeUrl(ResourceType.CLUSTER.typeUrl()).setNode(node()).build(), cfg));
    assertThat(d.getResources(0).hasTtl()).isFalse();
    assertThat(d.getResources(0).hasResource()).isTrue();
  }

  @Test
  void sotwHeartbeatsKeepTheResourceAliveWithoutBumpingTheVersion() throws Exception {
    ServedConfig cfg = Fixtures.config(withTtl("temp", 30), Fixtures.cluster("plain"));
    TwinStream<DiscoveryRequest> s = TwinStream.sotwAds(clock);
    DiscoveryResponse first = sotw(s.onRequest(cds().setNode(node(ClientFeatures.RESOURCE_TTL,
        ClientFeatures.RESOURCE_IN_SOTW)).build(), cfg));
    s.onRequest(ack(first), cfg);
    // Just sent: nothing due yet.
    clock.advance(java.time.Duration.ofSeconds(5));
    assertThat(s.onTick(cfg)).isEmpty();
    // Default interval: a third of the TTL.
    clock.advance(java.time.Duration.ofSeconds(5));
    DiscoveryResponse hb = sotw(s.onTick(cfg));
    assertThat(hb.getVersionInfo()).isEqualTo(first.getVersionInfo());
    assertThat(hb.getResourcesList()).singleElement().satisfies(a -> {
      Resource res = a.unpack(Resource.class);
      assertThat(res.getName()).isEqualTo("temp");
      assertThat(res.getVersion()).isEqualTo(withTtl("temp", 30).version());
      assertThat(res.getTtl().getSeconds()).isEqualTo(30);
      assertThat(res.hasResource()).as("a heartbeat has no body").isFalse();
    });
    // Un-ACKed heartbeat: flow control holds the next one.
    clock.advance(java.time.Duration.ofSeconds(20));
    assertThat(s.onTick(cfg)).isEmpty();
    s.onRequest(ack(hb), cfg);
    assertThat(sotw(s.onTick(cfg)).getResourcesCount()).isEqualTo(1);
  }

  /**
   * Issue 21: a client that resumes on another replica holding a TTL resource is sent nothing,
   * but its TTL runs on; the new stream heartbeats it at its next tick (it cannot know when the
   * old one last did), then at the usual interval.
   */
  @Test
  void sotwReconnectHoldingATtlResourceIsHeartbeatedAtTheNextTick() {
    ServedConfig cfg = Fixtures.config(withTtl("temp", 30), Fixtures.cluster("plain"));
    Node withTtl = node(ClientFeatures.RESOURCE_TTL, ClientFeatures.RESOURCE_IN_SOTW);
    DiscoveryResponse first = sotw(TwinStream.sotwAds(clock).onRequest(
        cds().setNode(withTtl).build(), cfg));
    TwinStream<DiscoveryRequest> resumed = TwinStream.sotwAds(clock);
    assertThat(resumed.onRequest(cds().setNode(withTtl).setVersionInfo(first.getVersionInfo())
        .build(), cfg)).noneMatch(o -> o instanceof Outcome.Send);
    DiscoveryResponse hb = sotw(resumed.onTick(cfg));
    assertThat(hb.getVersionInfo()).isEqualTo(first.getVersionInfo());
    assertThat(hb.getResourcesList()).singleElement().satisfies(a ->
        assertThat(a.unpack(Resource.class).getName()).isEqualTo("temp"));
    resumed.onRequest(ack(hb), cfg);
    assertThat(resumed.onTick(cfg)).isEmpty(); // just heartbeated: next one at the interval
    clock.advance(java.time.Duration.ofSeconds(10));
    assertThat(sotw(resumed.onTick(cfg)).getResourcesCount()).isEqualTo(1);
  }

  @Test
  void deltaReconnectHoldingATtlResourceIsHeartbeatedAtTheNextTick() {
    ServedConfig cfg = Fixtures.config(withTtl("temp", 30), Fixtures.cluster("plain"));
    DeltaDiscoveryResponse first = delta(TwinStream.deltaAds(clock).onRequest(
        DeltaDiscoveryRequest.newBuilder().setTypeUrl(ResourceType.CLUSTER.typeUrl())
            .setNode(node(ClientFeatures.RESOURCE_TTL)).build(), cfg));
    DeltaDiscoveryRequest.Builder resume = DeltaDiscoveryRequest.newBuilder()
        .setTypeUrl(ResourceType.CLUSTER.typeUrl()).setNode(node(ClientFeatures.RESOURCE_TTL));
    first.getResourcesList().forEach(r -> resume.putInitialResourceVersions(r.getName(),
        r.getVersion()));
    TwinStream<DeltaDiscoveryRequest> resumed = TwinStream.deltaAds(clock);
    assertThat(resumed.onRequest(resume.build(), cfg)).noneMatch(o -> o instanceof Outcome.Send);
    DeltaDiscoveryResponse hb = delta(resumed.onTick(cfg));
    assertThat(hb.getResourcesList()).singleElement().satisfies(r -> {
      assertThat(r.getName()).isEqualTo("temp");
      assertThat(r.hasResource()).isFalse();
    });
  }

  @Test
  void deltaHeartbeatsAndTtlChangesResend() {
    ServedConfig cfg = Fixtures.config(withTtl("temp", 3));
    TwinStream<DeltaDiscoveryRequest> s = TwinStream.deltaAds(clock);
    DeltaDiscoveryResponse first = delta(s.onRequest(DeltaDiscoveryRequest.newBuilder()
        .setTypeUrl(ResourceType.CLUSTER.typeUrl()).setNode(node(ClientFeatures.RESOURCE_TTL))
        .addResourceNamesSubscribe("*").build(), cfg));
    assertThat(first.getResources(0).getTtl().getSeconds()).isEqualTo(3);
    s.onRequest(DeltaDiscoveryRequest.newBuilder().setTypeUrl(ResourceType.CLUSTER.typeUrl())
        .setResponseNonce(first.getNonce()).build(), cfg);
    clock.advance(java.time.Duration.ofSeconds(1));
    DeltaDiscoveryResponse hb = delta(s.onTick(cfg));
    assertThat(hb.getResources(0).hasResource()).isFalse();
    assertThat(hb.getResources(0).getVersion()).isEqualTo(first.getResources(0).getVersion());
    s.onRequest(DeltaDiscoveryRequest.newBuilder().setTypeUrl(ResourceType.CLUSTER.typeUrl())
        .setResponseNonce(hb.getNonce()).build(), cfg);
    // Removing the TTL is a change: the resource is resent without a TTL, and heartbeats stop.
    ServedConfig noTtl = Fixtures.config(XdsResource.of(ResourceType.CLUSTER,
        Cluster.newBuilder().setName("temp").build()));
    java.util.Map<String, java.util.Map<ResourceType, java.util.Set<String>>> changes =
        java.util.Map.of(ServedConfig.DEFAULT_GROUP, noTtl.defaults().changedSince(cfg.defaults()));
    DeltaDiscoveryResponse resent = delta(s.onConfig(noTtl, changes));
    assertThat(resent.getResources(0).hasTtl()).isFalse();
    assertThat(resent.getResources(0).hasResource()).isTrue();
    s.onRequest(DeltaDiscoveryRequest.newBuilder().setTypeUrl(ResourceType.CLUSTER.typeUrl())
        .setResponseNonce(resent.getNonce()).build(), noTtl);
    clock.advance(java.time.Duration.ofSeconds(60));
    assertThat(s.onTick(noTtl)).isEmpty();
  }

  @Test
  void resourcesWithoutTtlNeverGetHeartbeats() {
    ServedConfig cfg = Fixtures.config(Fixtures.cluster("plain"));
    TwinStream<DiscoveryRequest> s = TwinStream.sotwAds(clock);
    DiscoveryResponse first = sotw(s.onRequest(cds().setNode(node(ClientFeatures.RESOURCE_TTL,
        ClientFeatures.RESOURCE_IN_SOTW)).build(), cfg));
    s.onRequest(ack(first), cfg);
    clock.advance(java.time.Duration.ofHours(1));
    assertThat(s.onTick(cfg)).isEmpty();
  }

  @Test
  void configuredIntervalIsUsedButNeverExceedsAThirdOfTheTtl() {
    HeartbeatPolicy p = HeartbeatPolicy.fixed(java.time.Duration.ofSeconds(2));
    assertThat(p.interval(Duration.newBuilder().setSeconds(30).build())).hasSeconds(2);
    assertThat(p.interval(Duration.newBuilder().setSeconds(3).build())).hasSeconds(1);
  }
}
