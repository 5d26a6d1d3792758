package dev.meridian.internal.protocol;

import dev.meridian.xds.ResourceType;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.rpc.Status;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * What a SotW stream reports for admin and CSDS: per-resource ACKed versions and the resources of
 * the latest response (spec "ACK/NACK and resource type instance version").
 */
class SotwStatusTest {
  static final Node NODE = Node.newBuilder().setId("n").build();
  /** Fixed: each stream has a plain twin (see {@link TwinStream}), whose NACKs must match in time. */
  static final Clock CLOCK = Clock.fixed(java.time.Instant.parse("2026-01-01T00:00:00Z"),
      java.time.ZoneOffset.UTC);

  static XdsResource cluster(String name, int timeoutSeconds) {
    return XdsResource.of(ResourceType.CLUSTER, Cluster.newBuilder().setName(name)
        .setConnectTimeout(com.google.protobuf.Duration.newBuilder().setSeconds(timeoutSeconds))
        .build());
  }

  static XdsResource endpoints(String name, int weight) {
    return XdsResource.of(ResourceType.ENDPOINT, ClusterLoadAssignment.newBuilder()
        .setClusterName(name).setPolicy(ClusterLoadAssignment.Policy.newBuilder()
            .setOverprovisioningFactor(com.google.protobuf.UInt32Value.of(100 + weight)))
        .build());
  }

  static ServedConfig config(XdsResource... resources) {
    return new ServedConfig(Snapshot.of(List.of(resources)), List.of());
  }

  static DiscoveryResponse sent(List<Outcome> out) {
    return out.stream().filter(o -> o instanceof Outcome.Send).map(o -> (DiscoveryResponse)
        ((Outcome.Send) o).response()).findFirst().orElseThrow();
  }

  static SotwStream.TypeStatus status(TwinStream<DiscoveryRequest> s, ResourceType t) {
    return s.status().stream().filter(x -> x.type() == t).findFirst().orElseThrow();
  }

  static DiscoveryRequest.Builder ack(DiscoveryResponse r, String... names) {
    return DiscoveryRequest.newBuilder().setTypeUrl(r.getTypeUrl()).setVersionInfo(r.getVersionInfo())
        .setResponseNonce(r.getNonce()).addAllResourceNames(List.of(names));
  }

  @Test
  void fullStateAckReplacesWhatTheClientRunsAndANackKeepsIt() {
    // Per-type: on ADS the deleted "b" would linger (make-before-break) and be removed later.
    TwinStream<DiscoveryRequest> s = TwinStream.sotwPerType(ResourceType.CLUSTER, CLOCK);
    ServedConfig v1 = config(cluster("a", 1), cluster("b", 1));
    DiscoveryResponse r1 = sent(s.onRequest(DiscoveryRequest.newBuilder().setNode(NODE)
        .setTypeUrl(ResourceType.CLUSTER.typeUrl()).build(), v1));
    SotwStream.TypeStatus inFlight = status(s, ResourceType.CLUSTER);
    assertThat(inFlight.pendingNonce()).isEqualTo(r1.getNonce());
    assertThat(inFlight.lastResponseVersions()).containsOnlyKeys("a", "b");
    assertThat(inFlight.ackedResourceVersions()).isEmpty();

    s.onRequest(ack(r1).build(), v1);
    assertThat(status(s, ResourceType.CLUSTER).ackedResourceVersions()).isEqualTo(Map.of(
        "a", cluster("a", 1).version(), "b", cluster("b", 1).version()));

    // "b" is deleted and "a" changes: the full-state response carries only "a".
    ServedConfig v2 = config(cluster("a", 2));
    DiscoveryResponse r2 = sent(s.onConfig(v2, Map.of(ServedConfig.DEFAULT_GROUP,
        Map.of(ResourceType.CLUSTER, Set.of("a", "b")))));
    s.onRequest(ack(r1).setResponseNonce(r2.getNonce())
        .setErrorDetail(Status.newBuilder().setMessage("no")).build(), v2);
    SotwStream.TypeStatus nacked = status(s, ResourceType.CLUSTER);
    assertThat(nacked.lastNack().rejectedVersion()).isEqualTo(nacked.sentVersion());
    assertThat(nacked.lastResponseVersions()).isEqualTo(Map.of("a", cluster("a", 2).version()));
    assertThat(nacked.ackedResourceVersions()).containsOnlyKeys("a", "b"); // still runs v1
    assertThat(nacked.pendingNonce()).isNull();
  }

  @Test
  void perResourceAcksAccumulateAndUnsubscribingForgets() {
    TwinStream<DiscoveryRequest> s = TwinStream.sotwAds(CLOCK);
    ServedConfig v1 = config(endpoints("x", 1), endpoints("y", 1));
    DiscoveryResponse r1 = sent(s.onRequest(DiscoveryRequest.newBuilder().setNode(NODE)
        .setTypeUrl(ResourceType.ENDPOINT.typeUrl()).addResourceNames("x").addResourceNames("y")
        .build(), v1));
    s.onRequest(ack(r1, "x", "y").build(), v1);
    ServedConfig v2 = config(endpoints("x", 2), endpoints("y", 1));
    DiscoveryResponse r2 = sent(s.onConfig(v2, Map.of(ServedConfig.DEFAULT_GROUP,
        Map.of(ResourceType.ENDPOINT, Set.of("x")))));
    assertThat(status(s, ResourceType.ENDPOINT).lastResponseVersions()).containsOnlyKeys("x");
    s.onRequest(ack(r2, "x", "y").build(), v2);
    assertThat(status(s, ResourceType.ENDPOINT).ackedResourceVersions()).isEqualTo(Map.of(
        "x", endpoints("x", 2).version(), "y", endpoints("y", 1).version()));

    s.onRequest(DiscoveryRequest.newBuilder().setTypeUrl(ResourceType.ENDPOINT.typeUrl())
        .addResourceNames("x").build(), v2);
    assertThat(status(s, ResourceType.ENDPOINT).ackedResourceVersions()).containsOnlyKeys("x");
  }

  @Test
  void aReconnectingClientThatHoldsTheViewIsReportedAsHavingAckedIt() {
    ServedConfig v1 = config(cluster("a", 1));
    TwinStream<DiscoveryRequest> first = TwinStream.sotwAds(CLOCK);
    DiscoveryResponse r = sent(first.onRequest(DiscoveryRequest.newBuilder().setNode(NODE)
        .setTypeUrl(ResourceType.CLUSTER.typeUrl()).build(), v1));
    TwinStream<DiscoveryRequest> again = TwinStream.sotwAds(CLOCK);
    assertThat(again.onRequest(DiscoveryRequest.newBuilder().setNode(NODE)
        .setTypeUrl(ResourceType.CLUSTER.typeUrl()).setVersionInfo(r.getVersionInfo()).build(), v1))
        .noneMatch(o -> o instanceof Outcome.Send);
    assertThat(status(again, ResourceType.CLUSTER).ackedResourceVersions())
        .isEqualTo(Map.of("a", cluster("a", 1).version()));
  }
}
