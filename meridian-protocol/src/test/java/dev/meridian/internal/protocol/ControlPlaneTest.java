package dev.meridian.internal.protocol;

import dev.meridian.xds.ResourceType;

import static org.assertj.core.api.Assertions.assertThat;

import io.envoyproxy.envoy.config.core.v3.ControlPlane;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 21: every response names the control plane that sent it ({@code control_plane}), on every
 * variant, heartbeats included; a stream given none leaves the field out.
 */
class ControlPlaneTest {
  enum Variant { SOTW_ADS, SOTW_PER_TYPE, DELTA_ADS, DELTA_PER_TYPE }

  static final ControlPlane REPLICA_A = ControlPlane.newBuilder().setIdentifier("meridian@a").build();
  final MutableClock clock = new MutableClock();

  /** The first response of a wildcard CDS subscription, then (ACKed) the next one after an edit. */
  List<com.google.protobuf.Message> responses(Variant v, ControlPlane cp) {
    ServedConfig before = Fixtures.config(Fixtures.cluster("a"));
    ServedConfig after = Fixtures.config(Fixtures.clusterWithTimeout("a", 7));
    boolean ads = v == Variant.SOTW_ADS || v == Variant.DELTA_ADS;
    if (v == Variant.SOTW_ADS || v == Variant.SOTW_PER_TYPE) {
      SotwStream s = ads ? SotwStream.ads(clock, Sharing.interning())
          : SotwStream.perType(ResourceType.CLUSTER, clock, Sharing.interning());
      s.withControlPlane(cp);
      DiscoveryResponse first = TtlTest.sotw(s.onRequest(TtlTest.cds()
          .setNode(Fixtures.node("n")).build(), before));
      s.onRequest(TtlTest.ack(first), before);
      DiscoveryResponse next = TtlTest.sotw(s.onConfig(after,
          java.util.Map.of(ServedConfig.DEFAULT_GROUP, java.util.Map.of(ResourceType.CLUSTER,
              java.util.Set.of("a")))));
      return List.of(first, next);
    }
    DeltaStream s = ads ? DeltaStream.ads(clock, Sharing.interning())
        : DeltaStream.perType(ResourceType.CLUSTER, clock, Sharing.interning());
    s.withControlPlane(cp);
    DeltaDiscoveryResponse first = TtlTest.delta(s.onRequest(DeltaDiscoveryRequest.newBuilder()
        .setTypeUrl(ResourceType.CLUSTER.typeUrl()).setNode(Fixtures.node("n")).build(), before));
    s.onRequest(DeltaDiscoveryRequest.newBuilder().setTypeUrl(ResourceType.CLUSTER.typeUrl())
        .setResponseNonce(first.getNonce()).build(), before);
    DeltaDiscoveryResponse next = TtlTest.delta(s.onConfig(after,
        java.util.Map.of(ServedConfig.DEFAULT_GROUP, java.util.Map.of(ResourceType.CLUSTER,
            java.util.Set.of("a")))));
    return List.of(first, next);
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void everyResponseNamesTheControlPlaneThatSentIt(Variant v) {
    for (com.google.protobuf.Message r : responses(v, REPLICA_A)) {
      ControlPlane cp = r instanceof DiscoveryResponse d ? d.getControlPlane()
          : ((DeltaDiscoveryResponse) r).getControlPlane();
      assertThat(cp.getIdentifier()).isEqualTo("meridian@a");
    }
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void aStreamGivenNoControlPlaneLeavesTheFieldOut(Variant v) {
    for (com.google.protobuf.Message r : responses(v, null)) {
      boolean has = r instanceof DiscoveryResponse d ? d.hasControlPlane()
          : ((DeltaDiscoveryResponse) r).hasControlPlane();
      assertThat(has).isFalse();
    }
  }

  @Test
  void heartbeatsNameTheControlPlaneToo() {
    ServedConfig cfg = Fixtures.config(TtlTest.withTtl("temp", 30));
    SotwStream sotw = SotwStream.ads(clock, Sharing.interning());
    sotw.withControlPlane(REPLICA_A);
    DiscoveryResponse first = TtlTest.sotw(sotw.onRequest(TtlTest.cds().setNode(TtlTest.node(
        ClientFeatures.RESOURCE_TTL, ClientFeatures.RESOURCE_IN_SOTW)).build(), cfg));
    sotw.onRequest(TtlTest.ack(first), cfg);
    DeltaStream delta = DeltaStream.ads(clock, Sharing.interning());
    delta.withControlPlane(REPLICA_A);
    DeltaDiscoveryResponse d = TtlTest.delta(delta.onRequest(DeltaDiscoveryRequest.newBuilder()
        .setTypeUrl(ResourceType.CLUSTER.typeUrl())
        .setNode(TtlTest.node(ClientFeatures.RESOURCE_TTL)).build(), cfg));
    delta.onRequest(DeltaDiscoveryRequest.newBuilder().setTypeUrl(ResourceType.CLUSTER.typeUrl())
        .setResponseNonce(d.getNonce()).build(), cfg);
    clock.advance(Duration.ofSeconds(11));
    assertThat(TtlTest.sotw(sotw.onTick(cfg)).getControlPlane()).isEqualTo(REPLICA_A);
    assertThat(TtlTest.delta(delta.onTick(cfg)).getControlPlane()).isEqualTo(REPLICA_A);
  }
}
