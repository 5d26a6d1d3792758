package dev.meridian.client;

import static dev.meridian.client.TestResources.apiListener;
import static dev.meridian.client.TestResources.apiListenerWithoutRoutes;
import static dev.meridian.client.TestResources.edsCluster;
import static dev.meridian.client.TestResources.edsClusterWithoutEdsConfig;
import static dev.meridian.client.TestResources.routes;
import static dev.meridian.client.TestResources.sotw;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** State-of-the-World scenarios against a scripted peer and a fake clock. */
class XdsClientSotwTest {
  private final FakeTransport transport = new FakeTransport();
  private final FakeScheduler clock = new FakeScheduler();
  private XdsClient client;

  @BeforeEach
  void setUp() {
    client = newClient(XdsClient.Mode.ADS);
  }

  private XdsClient newClient(XdsClient.Mode mode) {
    Bootstrap b = Bootstrap.forServer("fake:1", Node.newBuilder().setId("n1").build());
    return new XdsClient(b, XdsClient.Options.defaults().withMode(mode)
        .withCallbackExecutor(Runnable::run).withScheduler(clock).withRandom(() -> 0.5), transport);
  }

  @AfterEach
  void tearDown() {
    client.close();
  }

  private FakeTransport.FakeCall<DiscoveryRequest, DiscoveryResponse> call() {
    return transport.lastSotw();
  }

  @Test
  void firstRequestCarriesNodeNameAndEmptyVersionAndNonce() {
    client.watch(ResourceType.LISTENER, "l1", new RecordingWatcher());
    DiscoveryRequest r = call().next();
    assertThat(r.getTypeUrl()).isEqualTo(ResourceType.LISTENER.typeUrl());
    assertThat(r.getNode().getId()).isEqualTo("n1");
    assertThat(r.getResourceNamesList()).containsExactly("l1");
    assertThat(r.getVersionInfo()).isEmpty();
    assertThat(r.getResponseNonce()).isEmpty();
    assertThat(call().scope).isEqualTo(StreamScope.ADS);
  }

  @Test
  void ackCarriesVersionAndNonceAndWatcherGetsResource() {
    RecordingWatcher w = new RecordingWatcher();
    client.watch(ResourceType.LISTENER, "l1", w);
    call().next();
    call().respond(sotw(ResourceType.LISTENER, "v1", "n-1", apiListener("l1", "r1")));
    DiscoveryRequest ack = call().next();
    assertThat(ack.getErrorDetail().getMessage()).isEmpty();
    assertThat(ack.getVersionInfo()).isEqualTo("v1");
    assertThat(ack.getResponseNonce()).isEqualTo("n-1");
    assertThat(ack.hasErrorDetail()).isFalse();
    assertThat(ack.hasNode()).isFalse(); // spec: the node only on the first request
    assertThat(w.take()).containsExactly("changed:l1", "processed:v1");
    assertThat(w.latest.get("l1").serverVersion()).isEqualTo("v1");
  }

  // Spec "ACK/NACK and resource instance versioning": the NACK's version_info is the last version
  // the client accepted; the valid resources of the rejected response are still used.
  @Test
  void nackReportsLastAcceptedVersion() {
    RecordingWatcher a = new RecordingWatcher();
    RecordingWatcher b = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, "a", a);
    client.watch(ResourceType.CLUSTER, "b", b);
    call().requests.clear();
    call().respond(sotw(ResourceType.CLUSTER, "v1", "n1", edsCluster("a"), edsCluster("b")));
    assertThat(call().next().getVersionInfo()).isEqualTo("v1");
    a.take();
    b.take();

    var a2 = edsCluster("a").toBuilder().setConnectTimeout(
        com.google.protobuf.Duration.newBuilder().setSeconds(3)).build();
    call().respond(sotw(ResourceType.CLUSTER, "v2", "n2", a2, edsClusterWithoutEdsConfig("b")));
    DiscoveryRequest nack = call().next();
    assertThat(nack.getVersionInfo()).isEqualTo("v1");
    assertThat(nack.getResponseNonce()).isEqualTo("n2");
    assertThat(nack.getErrorDetail().getMessage()).contains("b").contains("eds_config");
    assertThat(nack.getResourceNamesList()).containsExactlyInAnyOrder("a", "b");
    assertThat(a.take()).containsExactly("changed:a", "processed:v1:nack");
    assertThat(a.latest.get("a").message()).isEqualTo(a2);
    // b keeps its last good value and hears an error.
    assertThat(b.take()).containsExactly("error:INVALID_RESOURCE:b", "processed:v1:nack");
    assertThat(b.errors.get(0).message()).contains("eds_config").doesNotContain("CDS a");
    assertThat(b.latest.get("b").message()).isEqualTo(edsCluster("b"));
  }

  @Test
  void nackCollectsEveryProblemOfOneResponseInOneBoundedMessage() {
    RecordingWatcher w = new RecordingWatcher();
    client.watchAll(ResourceType.LISTENER, w);
    call().requests.clear();
    DiscoveryResponse bad = sotw(ResourceType.LISTENER, "v1", "n1",
        apiListener("good", "r"), apiListenerWithoutRoutes("no-routes"),
        apiListener("dup", "r"), apiListener("dup", "r2")).toBuilder()
        .addResources(Any.pack(edsCluster("wrong-type")))
        .addResources(Any.newBuilder().setTypeUrl(ResourceType.LISTENER.typeUrl())
            .setValue(ByteString.copyFromUtf8("\u00ff\u00ff not a proto")))
        .build();
    call().respond(bad);
    DiscoveryRequest nack = call().next();
    assertThat(nack.getVersionInfo()).isEmpty();
    String msg = nack.getErrorDetail().getMessage();
    assertThat(msg).contains("no-routes").contains("neither rds nor route_config")
        .contains("duplicate resource name dup").contains("does not match")
        .contains("cannot parse");
    assertThat(msg.length()).isLessThanOrEqualTo(dev.meridian.internal.protocol.Nack.MAX_MESSAGE + 40);
    assertThat(w.latest).containsOnlyKeys("good");
  }

  @Test
  void invalidFirstVersionStopsTheTimerAndReportsTheError() {
    RecordingWatcher w = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, "b", w);
    call().ready();
    call().respond(sotw(ResourceType.CLUSTER, "v1", "n1", edsClusterWithoutEdsConfig("b")));
    assertThat(w.take()).containsExactly("error:INVALID_RESOURCE:b", "processed::nack");
    clock.forward(Duration.ofSeconds(60));
    assertThat(w.take()).isEmpty(); // it exists, it is just unusable: no does-not-exist
  }

  @Test
  void nackMessageIsBounded() {
    client.watchAll(ResourceType.CLUSTER, new RecordingWatcher());
    call().requests.clear();
    DiscoveryResponse.Builder b = sotw(ResourceType.CLUSTER, "v1", "n1").toBuilder();
    for (int i = 0; i < 500; i++) {
      b.addResources(Any.pack(edsClusterWithoutEdsConfig("c-" + i)));
    }
    call().respond(b.build());
    String msg = call().next().getErrorDetail().getMessage();
    assertThat(msg).hasSizeLessThan(dev.meridian.internal.protocol.Nack.MAX_MESSAGE + 100);
  }

  // Spec "Knowing When a Requested Resource Does Not Exist".
  @Test
  void doesNotExistTimerStartsOnlyOnceTheStreamIsReady() {
    RecordingWatcher w = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, "c", w);
    clock.forward(Duration.ofSeconds(60));
    assertThat(w.take()).isEmpty();
    call().ready();
    clock.forward(Duration.ofSeconds(14));
    assertThat(w.take()).isEmpty();
    clock.forward(Duration.ofSeconds(1));
    assertThat(w.take()).containsExactly("dne:c");
    // A late arrival still counts.
    call().respond(sotw(ResourceType.CLUSTER, "v1", "n1", edsCluster("c")));
    assertThat(w.take()).containsExactly("changed:c", "processed:v1");
  }

  @Test
  void doesNotExistTimeoutIsConfigurable() {
    client.close();
    Bootstrap b = Bootstrap.forServer("fake:1", Node.getDefaultInstance());
    client = new XdsClient(b, XdsClient.Options.defaults().withDoesNotExistTimeout(Duration.ofSeconds(2))
        .withCallbackExecutor(Runnable::run).withScheduler(clock), transport);
    RecordingWatcher w = new RecordingWatcher();
    client.watch(ResourceType.ROUTE, "r", w);
    call().ready();
    clock.forward(Duration.ofSeconds(2));
    assertThat(w.take()).containsExactly("dne:r");
  }

  // Spec "Grouping Resources into Responses": LDS/CDS responses are the full state.
  @Test
  void sotwClusterAbsenceMeansDeletion() {
    RecordingWatcher w = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, "a", w);
    client.watch(ResourceType.CLUSTER, "b", w);
    call().ready();
    call().respond(sotw(ResourceType.CLUSTER, "v1", "n1", edsCluster("a"), edsCluster("b")));
    w.take();
    call().respond(sotw(ResourceType.CLUSTER, "v2", "n2", edsCluster("a")));
    assertThat(w.take()).containsExactly("dne:b", "processed:v2");
  }

  // Spec "Knowing When a Requested Resource Does Not Exist": a name in every request of the
  // stream was asked for by whichever request a full-state response answers.
  @Test
  void clusterMissingFromTheAnswerToEveryRequestDoesNotExistAtOnce() {
    RecordingWatcher w = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, List.of("a", "b"), w);
    assertThat(call().next().getResourceNamesList()).containsExactly("a", "b");
    assertThat(call().requests).isEmpty();
    call().ready();
    call().respond(sotw(ResourceType.CLUSTER, "v1", "n1", edsCluster("a")));
    assertThat(w.take()).containsExactly("changed:a", "dne:b", "processed:v1");
  }

  @Test
  void clusterAddedLaterIsNotJudgedByAnAnswerToAnEarlierRequest() {
    RecordingWatcher w = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, "a", w);
    client.watch(ResourceType.CLUSTER, "b", w);
    call().ready();
    call().respond(sotw(ResourceType.CLUSTER, "v1", "n1", edsCluster("a")));
    assertThat(w.take()).containsExactly("changed:a", "processed:v1");
    clock.forward(Duration.ofSeconds(15));
    assertThat(w.take()).containsExactly("dne:b");
  }

  @Test
  void cancellingAMultiNameWatchCancelsEveryName() {
    Watch both = client.watch(ResourceType.ROUTE, List.of("a", "b"), new RecordingWatcher());
    call().requests.clear();
    both.cancel();
    assertThat(call().requests.getLast().getResourceNamesList()).isEmpty();
  }

  @Test
  void routeAbsenceFromAResponseIsNotDeletion() {
    RecordingWatcher w = new RecordingWatcher();
    client.watch(ResourceType.ROUTE, "r1", w);
    client.watch(ResourceType.ROUTE, "r2", w);
    call().ready();
    call().respond(sotw(ResourceType.ROUTE, "v1", "n1", routes("r1", "*", "/", "c"),
        routes("r2", "*", "/", "c")));
    w.take();
    call().respond(sotw(ResourceType.ROUTE, "v2", "n2", routes("r1", "*", "/", "c2")));
    assertThat(w.take()).containsExactly("changed:r1", "processed:v2");
    assertThat(w.latest).containsKeys("r1", "r2");
  }

  @Test
  void unchangedResourceIsNotRedelivered() {
    RecordingWatcher w = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, "a", w);
    call().respond(sotw(ResourceType.CLUSTER, "v1", "n1", edsCluster("a")));
    call().respond(sotw(ResourceType.CLUSTER, "v2", "n2", edsCluster("a")));
    assertThat(w.take()).containsExactly("changed:a", "processed:v1", "processed:v2");
  }

  @Test
  void newWatcherForCachedResourceGetsItAtOnce() {
    client.watch(ResourceType.CLUSTER, "a", new RecordingWatcher());
    call().respond(sotw(ResourceType.CLUSTER, "v1", "n1", edsCluster("a")));
    call().requests.clear();
    RecordingWatcher late = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, "a", late);
    assertThat(late.take()).containsExactly("changed:a");
    assertThat(call().requests).isEmpty(); // already subscribed: nothing to tell the server
  }

  @Test
  void wildcardWatchSendsLegacyWildcardAndSeesEverything() {
    RecordingWatcher w = new RecordingWatcher();
    client.watchAll(ResourceType.CLUSTER, w);
    assertThat(call().next().getResourceNamesList()).isEmpty();
    call().respond(sotw(ResourceType.CLUSTER, "v1", "n1", edsCluster("a"), edsCluster("b")));
    assertThat(w.take()).containsExactly("changed:a", "changed:b", "processed:v1");
    call().respond(sotw(ResourceType.CLUSTER, "v2", "n2", edsCluster("b")));
    assertThat(w.take()).containsExactly("dne:a", "processed:v2");
    // Naming a resource too makes the wildcard explicit.
    call().requests.clear();
    client.watch(ResourceType.CLUSTER, "x", new RecordingWatcher());
    assertThat(call().next().getResourceNamesList()).containsExactly("*", "x");
  }

  @Test
  void emptyWildcardResponseStillReportsProcessed() {
    RecordingWatcher w = new RecordingWatcher();
    client.watchAll(ResourceType.SECRET, w);
    call().respond(sotw(ResourceType.SECRET, "v0", "n1"));
    assertThat(w.take()).containsExactly("processed:v0");
  }

  @Test
  void cancelUnsubscribesAndStopsCallbacks() {
    RecordingWatcher w = new RecordingWatcher();
    Watch a = client.watch(ResourceType.ROUTE, "a", w);
    client.watch(ResourceType.ROUTE, "b", new RecordingWatcher());
    call().requests.clear();
    a.cancel();
    assertThat(call().next().getResourceNamesList()).containsExactly("b");
    call().respond(sotw(ResourceType.ROUTE, "v1", "n1", routes("a", "*", "/", "c")));
    assertThat(w.take()).isEmpty();
  }

  @Test
  void responseForUnknownTypeUrlIsNacked() {
    client.watch(ResourceType.CLUSTER, "a", new RecordingWatcher());
    call().requests.clear();
    call().respond(DiscoveryResponse.newBuilder().setTypeUrl("type.googleapis.com/foo.Bar")
        .setVersionInfo("1").setNonce("x").build());
    DiscoveryRequest nack = call().next();
    assertThat(nack.getTypeUrl()).isEqualTo("type.googleapis.com/foo.Bar");
    assertThat(nack.getErrorDetail().getMessage()).contains("unexpected type URL");
  }

  // gRPC connection-backoff: 1 s, then x1.6, with jitter (random fixed at 0.5: no spread here).
  @Test
  void reconnectBacksOffAndResubscribesWithLastVersionAndEmptyNonce() {
    RecordingWatcher w = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, "a", w);
    call().ready();
    call().respond(sotw(ResourceType.CLUSTER, "v1", "n1", edsCluster("a")));
    // After a response the stream reconnects at once.
    call().fail(Status.UNAVAILABLE);
    assertThat(transport.sotwCalls).hasSize(2);
    DiscoveryRequest again = call().next();
    assertThat(again.getVersionInfo()).isEqualTo("v1");
    assertThat(again.getResponseNonce()).isEmpty();
    assertThat(again.getResourceNamesList()).containsExactly("a");
    assertThat(again.getNode().getId()).isEqualTo("n1");
    assertThat(w.take()).containsExactly("changed:a", "processed:v1", "error:UNAVAILABLE");
    assertThat(w.latest).containsKey("a"); // the last good value stays

    // Without a response: back off 1 s, then 1.6 s.
    call().fail(Status.UNAVAILABLE);
    clock.forward(Duration.ofMillis(999));
    assertThat(transport.sotwCalls).hasSize(2);
    clock.forward(Duration.ofMillis(1));
    assertThat(transport.sotwCalls).hasSize(3);
    call().fail(Status.UNAVAILABLE);
    clock.forward(Duration.ofMillis(1599));
    assertThat(transport.sotwCalls).hasSize(3);
    clock.forward(Duration.ofMillis(1));
    assertThat(transport.sotwCalls).hasSize(4);
  }

  @Test
  void doesNotExistTimerRestartsOnTheNextReadyStream() {
    RecordingWatcher w = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, "a", w);
    call().ready();
    clock.forward(Duration.ofSeconds(10));
    call().fail(Status.UNAVAILABLE);
    clock.forward(Duration.ofSeconds(10)); // reconnects after 1 s, not ready yet
    assertThat(w.take()).containsExactly("error:UNAVAILABLE");
    call().ready();
    clock.forward(Duration.ofSeconds(15));
    assertThat(w.take()).containsExactly("dne:a");
  }

  @Test
  void perTypeModeOpensOneStreamPerType() {
    client.close();
    client = newClient(XdsClient.Mode.PER_TYPE);
    client.watch(ResourceType.CLUSTER, "c", new RecordingWatcher());
    client.watch(ResourceType.LISTENER, "l", new RecordingWatcher());
    assertThat(transport.sotwCalls).extracting(c -> c.scope)
        .containsExactly(StreamScope.of(ResourceType.CLUSTER), StreamScope.of(ResourceType.LISTENER));
    transport.sotwCalls.get(0).respond(sotw(ResourceType.LISTENER, "v", "n", apiListener("l", "r")));
    assertThat(transport.sotwCalls.get(0).next().getResourceNamesList()).containsExactly("c");
    assertThat(transport.sotwCalls.get(0).next().getErrorDetail().getMessage())
        .contains("unexpected type URL");
  }

  @Test
  void reconnectSubscribesInMakeBeforeBreakOrder() {
    client.watch(ResourceType.ROUTE, "r", new RecordingWatcher());
    client.watch(ResourceType.LISTENER, "l", new RecordingWatcher());
    client.watch(ResourceType.CLUSTER, "c", new RecordingWatcher());
    call().fail(Status.UNAVAILABLE);
    clock.forward(Duration.ofSeconds(1));
    List<String> order = call().requests.stream().map(DiscoveryRequest::getTypeUrl).toList();
    assertThat(order).containsExactly(ResourceType.CLUSTER.typeUrl(),
        ResourceType.LISTENER.typeUrl(), ResourceType.ROUTE.typeUrl());
  }

  @Test
  void closeCancelsTheStreamAndTheTransport() {
    client.watch(ResourceType.CLUSTER, "a", new RecordingWatcher());
    client.close();
    assertThat(call().cancelled).isTrue();
    assertThat(transport.closed).isTrue();
    assertThat(clock.pending()).isZero();
  }
}
