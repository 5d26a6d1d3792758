package dev.meridian.client;

import static dev.meridian.client.TestResources.edsCluster;
import static dev.meridian.client.TestResources.edsClusterWithoutEdsConfig;
import static dev.meridian.client.TestResources.wrapped;
import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Incremental (Delta) scenarios: spec "Incremental xDS". */
class XdsClientDeltaTest {
  private final FakeTransport transport = new FakeTransport();
  private final FakeScheduler clock = new FakeScheduler();
  private final XdsClient client = new XdsClient(
      Bootstrap.forServer("fake:1", Node.newBuilder().setId("n1").build()),
      XdsClient.Options.defaults().withProtocol(XdsClient.Protocol.DELTA)
          .withCallbackExecutor(Runnable::run).withScheduler(clock).withRandom(() -> 0.5),
      transport);

  @AfterEach
  void tearDown() {
    client.close();
  }

  private FakeTransport.FakeCall<DeltaDiscoveryRequest, DeltaDiscoveryResponse> call() {
    return transport.lastDelta();
  }

  static DeltaDiscoveryResponse delta(String nonce, List<Resource> resources,
      String... removed) {
    return DeltaDiscoveryResponse.newBuilder().setTypeUrl(ResourceType.CLUSTER.typeUrl())
        .setNonce(nonce).setSystemVersionInfo("sys-" + nonce).addAllResources(resources)
        .addAllRemovedResources(List.of(removed)).build();
  }

  @Test
  void subscriptionChangesAreSentAsDiffs() {
    Watch a = client.watch(ResourceType.CLUSTER, "a", new RecordingWatcher());
    DeltaDiscoveryRequest first = call().next();
    assertThat(first.getNode().getId()).isEqualTo("n1");
    assertThat(first.getResourceNamesSubscribeList()).containsExactly("a");
    client.watch(ResourceType.CLUSTER, "b", new RecordingWatcher());
    DeltaDiscoveryRequest second = call().next();
    assertThat(second.getResourceNamesSubscribeList()).containsExactly("b");
    assertThat(second.hasNode()).isFalse();
    a.cancel();
    assertThat(call().next().getResourceNamesUnsubscribeList()).containsExactly("a");
    assertThat(call().requests).isEmpty();
  }

  @Test
  void ackCarriesNonceAndNackCarriesErrorDetail() {
    RecordingWatcher w = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, "a", w);
    client.watch(ResourceType.CLUSTER, "b", w);
    call().requests.clear();
    call().respond(delta("1", List.of(wrapped("a", edsCluster("a"), "va", 0))));
    DeltaDiscoveryRequest ack = call().next();
    assertThat(ack.getResponseNonce()).isEqualTo("1");
    assertThat(ack.hasErrorDetail()).isFalse();
    call().respond(delta("2", List.of(wrapped("b", edsClusterWithoutEdsConfig("b"), "vb", 0))));
    DeltaDiscoveryRequest nack = call().next();
    assertThat(nack.getResponseNonce()).isEqualTo("2");
    assertThat(nack.getErrorDetail().getMessage()).contains("eds_config");
    assertThat(w.latest.get("a").serverVersion()).isEqualTo("va");
  }

  @Test
  void removedResourcesAreDeleted() {
    RecordingWatcher w = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, "a", w);
    call().respond(delta("1", List.of(wrapped("a", edsCluster("a"), "va", 0))));
    call().respond(delta("2", List.of(), "a"));
    assertThat(w.take()).containsExactly("changed:a", "processed:sys-1", "dne:a",
        "processed:sys-2");
  }

  @Test
  void removedBeforeEverSeenMeansDoesNotExistWithoutWaiting() {
    RecordingWatcher w = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, "ghost", w);
    call().ready();
    call().respond(delta("1", List.of(), "ghost"));
    assertThat(w.take()).containsExactly("dne:ghost", "processed:sys-1");
    clock.forward(Duration.ofSeconds(30));
    assertThat(w.take()).isEmpty();
    assertThat(clock.pending()).isZero();
  }

  @Test
  void deltaResponsesAreNotFullStateSoAbsenceIsNotDeletion() {
    RecordingWatcher w = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, "a", w);
    client.watch(ResourceType.CLUSTER, "b", w);
    call().respond(delta("1", List.of(wrapped("a", edsCluster("a"), "va", 0),
        wrapped("b", edsCluster("b"), "vb", 0))));
    call().respond(delta("2", List.of(wrapped("a", edsCluster("a").toBuilder()
        .setAltStatName("x").build(), "va2", 0))));
    assertThat(w.latest).containsOnlyKeys("a", "b");
  }

  @Test
  void reconnectSendsInitialResourceVersions() {
    client.watch(ResourceType.CLUSTER, "a", new RecordingWatcher());
    client.watch(ResourceType.CLUSTER, "b", new RecordingWatcher());
    call().respond(delta("1", List.of(wrapped("a", edsCluster("a"), "va", 0))));
    call().fail(Status.UNAVAILABLE);
    assertThat(transport.deltaCalls).hasSize(2);
    DeltaDiscoveryRequest first = call().next();
    assertThat(first.getResourceNamesSubscribeList()).containsExactlyInAnyOrder("a", "b");
    assertThat(first.getInitialResourceVersionsMap()).containsExactly(java.util.Map.entry("a", "va"));
    assertThat(first.getResponseNonce()).isEmpty();
  }

  @Test
  void wildcardUsesLegacyFormThenExplicitStar() {
    client.watchAll(ResourceType.CLUSTER, new RecordingWatcher());
    assertThat(call().next().getResourceNamesSubscribeList()).isEmpty();
    client.watch(ResourceType.CLUSTER, "x", new RecordingWatcher());
    assertThat(call().next().getResourceNamesSubscribeList()).containsExactly("*", "x");
  }

  // Spec "TTL": without an update or a heartbeat within the TTL, the resource is gone.
  @Test
  void ttlExpiryRemovesResourceUnlessHeartbeated() {
    RecordingWatcher w = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, "a", w);
    call().respond(delta("1", List.of(wrapped("a", edsCluster("a"), "va", 10))));
    w.take();
    clock.forward(Duration.ofSeconds(9));
    call().respond(delta("2", List.of(wrapped("a", null, "va", 10)))); // heartbeat
    clock.forward(Duration.ofSeconds(9));
    assertThat(w.take()).containsExactly("processed:sys-2");
    clock.forward(Duration.ofSeconds(1));
    assertThat(w.take()).containsExactly("dne:a");
    assertThat(w.latest).isEmpty();
  }
}
