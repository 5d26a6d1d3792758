package dev.meridian.client;

import static dev.meridian.client.TestResources.edsCluster;
import static dev.meridian.client.TestResources.sotw;
import static dev.meridian.client.TestResources.wrapped;
import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Several {@code xds_servers} (gRFC A71 "xDS Fallback") against scripted peers and a fake clock:
 * when the client falls back, what it tells the next server, what watchers hear, and when it goes
 * back. {@link MeridianFailoverTest} does the same against real Meridian replicas.
 */
class FallbackTest {
  private static final Bootstrap.ServerInfo PRIMARY =
      new Bootstrap.ServerInfo("primary:1", Bootstrap.ChannelCreds.INSECURE, List.of());
  private static final Bootstrap.ServerInfo SECONDARY =
      new Bootstrap.ServerInfo("secondary:1", Bootstrap.ChannelCreds.INSECURE, List.of());
  private static final Status REFUSED = Status.UNAVAILABLE.withDescription("connection refused");

  private final FakeTransport primary = new FakeTransport();
  private final FakeTransport secondary = new FakeTransport();
  private final FakeScheduler clock = new FakeScheduler();
  private XdsClient client;

  private XdsClient client(XdsClient.Protocol protocol, XdsClient.Fallback fallback) {
    Bootstrap b = new Bootstrap(List.of(PRIMARY, SECONDARY), Node.newBuilder().setId("n").build(),
        Map.of(), null);
    client = new XdsClient(b, XdsClient.Options.defaults().withProtocol(protocol)
        .withFallback(fallback).withCallbackExecutor(Runnable::run).withScheduler(clock)
        .withRandom(() -> 0.5),
        server -> server.equals(PRIMARY) ? primary : secondary);
    return client;
  }

  @AfterEach
  void tearDown() {
    if (client != null) {
      client.close();
    }
  }

  // gRFC A71 "Change XdsClient to support fallback within each xDS authority": the primary's
  // stream ends before any response (A57: unreachable) while a watched resource is not cached.
  @Test
  void primaryUnreachableAtStart_fallsBackWithoutTellingTheWatchers() {
    client(XdsClient.Protocol.SOTW, XdsClient.Fallback.WHEN_UNCACHED);
    RecordingWatcher w = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, "a", w);
    primary.lastSotw().fail(REFUSED);

    assertThat(client.serverInUse()).isEqualTo(SECONDARY);
    DiscoveryRequest first = secondary.lastSotw().next();
    assertThat(first.getResourceNamesList()).containsExactly("a");
    assertThat(first.getNode().getId()).isEqualTo("n");
    secondary.lastSotw().respond(sotw(ResourceType.CLUSTER, "v1", "n1", edsCluster("a")));
    // "Resource watchers will only be notified of connectivity failures after all xDS control
    // planes listed in the bootstrap JSON have become unreachable."
    assertThat(w.take()).containsExactly("changed:a", "processed:v1");
  }

  // gRFC A71: "at least one watcher exists for a resource that is not cached". Everything is
  // cached: the client keeps its cache and the primary, and the watchers hear of the failure.
  @Test
  void primaryLostWithEverythingCached_a71KeepsThePrimaryAndTellsTheWatchers() {
    client(XdsClient.Protocol.SOTW, XdsClient.Fallback.WHEN_UNCACHED);
    RecordingWatcher w = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, "a", w);
    primary.lastSotw().respond(sotw(ResourceType.CLUSTER, "v1", "n1", edsCluster("a")));
    primary.lastSotw().fail(Status.UNAVAILABLE.withDescription("server shutting down"));
    primary.lastSotw().fail(REFUSED); // the immediate reconnect fails: unreachable

    assertThat(client.serverInUse()).isEqualTo(PRIMARY);
    assertThat(secondary.sotwCalls).isEmpty();
    // Told once: the close after responses is followed by an immediate reconnect, whose failure
    // says the primary is unreachable.
    assertThat(w.take()).containsExactly("changed:a", "processed:v1", "error:UNAVAILABLE");
    assertThat(w.errors.get(0).message()).contains("connection refused");
    assertThat(w.latest).containsKey("a"); // the last good value stays (A57)
  }

  // Meridian's replicas: with Fallback.WHEN_UNREACHABLE (A95's fallback_on_reachability_only) the
  // client leaves an unreachable server even with everything cached, and tells the next one what
  // it holds, so that a replica serving the same config resends nothing.
  @Test
  void primaryLostWithEverythingCached_replicasFallBackCarryingTheSotwVersion() {
    client(XdsClient.Protocol.SOTW, XdsClient.Fallback.WHEN_UNREACHABLE);
    RecordingWatcher w = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, "a", w);
    primary.lastSotw().respond(sotw(ResourceType.CLUSTER, "v1", "n1", edsCluster("a")));
    w.take();
    primary.lastSotw().fail(Status.UNAVAILABLE.withDescription("server shutting down"));
    assertThat(client.serverInUse()).isEqualTo(PRIMARY); // reconnecting at once: not yet lost
    primary.lastSotw().fail(REFUSED);

    assertThat(client.serverInUse()).isEqualTo(SECONDARY);
    DiscoveryRequest first = secondary.lastSotw().next();
    assertThat(first.getVersionInfo()).isEqualTo("v1");
    assertThat(first.getResponseNonce()).isEmpty();
    assertThat(first.getResourceNamesList()).containsExactly("a");
    // The same resource again (a replica whose version strings differ): nothing to report.
    secondary.lastSotw().respond(sotw(ResourceType.CLUSTER, "other-v1", "s1", edsCluster("a")));
    assertThat(w.take()).containsExactly("processed:other-v1");
    // An update from the secondary reaches the watcher.
    var a2 = edsCluster("a").toBuilder().setConnectTimeout(
        com.google.protobuf.Duration.newBuilder().setSeconds(3)).build();
    secondary.lastSotw().respond(sotw(ResourceType.CLUSTER, "other-v2", "s2", a2));
    assertThat(w.take()).containsExactly("changed:a", "processed:other-v2");
  }

  @Test
  void primaryLostWithEverythingCached_replicasFallBackCarryingDeltaInitialResourceVersions() {
    client(XdsClient.Protocol.DELTA, XdsClient.Fallback.WHEN_UNREACHABLE);
    RecordingWatcher w = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, "a", w);
    primary.lastDelta().respond(delta("n1", wrapped("a", edsCluster("a"), "ha", 0)));
    w.take();
    primary.lastDelta().fail(Status.UNAVAILABLE.withDescription("server shutting down"));
    primary.lastDelta().fail(REFUSED);

    assertThat(client.serverInUse()).isEqualTo(SECONDARY);
    DeltaDiscoveryRequest first = secondary.lastDelta().next();
    assertThat(first.getResourceNamesSubscribeList()).containsExactly("a");
    assertThat(first.getInitialResourceVersionsMap()).containsExactly(Map.entry("a", "ha"));
    assertThat(w.take()).isEmpty();
  }

  // gRFC A71: the streams to higher-priority servers stay and reconnect; "Once such a resource is
  // received, the XdsClient will close connections to the lower-priority server(s)".
  @Test
  void primaryAnswersAgain_theClientGoesBackAndClosesTheSecondary() {
    client(XdsClient.Protocol.SOTW, XdsClient.Fallback.WHEN_UNCACHED);
    RecordingWatcher w = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, "a", w);
    primary.lastSotw().fail(REFUSED);
    secondary.lastSotw().respond(sotw(ResourceType.CLUSTER, "s1", "n1", edsCluster("a")));
    w.take();

    clock.forward(Duration.ofSeconds(1)); // the primary's backoff
    assertThat(primary.sotwCalls).hasSize(2);
    DiscoveryRequest again = primary.lastSotw().next();
    assertThat(again.getResourceNamesList()).containsExactly("a");
    assertThat(again.getVersionInfo()).isEqualTo("s1");
    primary.lastSotw().ready();
    assertThat(client.serverInUse()).isEqualTo(SECONDARY); // A71: reachable is not enough
    primary.lastSotw().respond(sotw(ResourceType.CLUSTER, "p1", "n2", edsCluster("a")));

    assertThat(client.serverInUse()).isEqualTo(PRIMARY);
    assertThat(secondary.lastSotw().cancelled).isTrue();
    assertThat(w.take()).containsExactly("processed:p1"); // the same cluster: not reported
  }

  // For replicas a server of higher priority is taken back as soon as it is reachable: holding
  // the same versions, it may never send anything.
  @Test
  void primaryReachableAgain_replicasGoBackAtOnce() {
    client(XdsClient.Protocol.DELTA, XdsClient.Fallback.WHEN_UNREACHABLE);
    RecordingWatcher w = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, "a", w);
    primary.lastDelta().fail(REFUSED);
    secondary.lastDelta().ready();
    secondary.lastDelta().respond(delta("n1", wrapped("a", edsCluster("a"), "ha", 0)));
    w.take();

    clock.forward(Duration.ofSeconds(1));
    DeltaDiscoveryRequest again = primary.lastDelta().next();
    assertThat(again.getInitialResourceVersionsMap()).containsExactly(Map.entry("a", "ha"));
    primary.lastDelta().ready();

    assertThat(client.serverInUse()).isEqualTo(PRIMARY);
    assertThat(secondary.lastDelta().cancelled).isTrue();
    assertThat(w.take()).isEmpty();
    // The closed secondary is not listened to any more.
    secondary.lastDelta().respond(delta("late", List.of(), "a"));
    assertThat(w.take()).isEmpty();
    assertThat(w.latest).containsKey("a");
  }

  // The channel to the primary is ready again (it is back): its stream stops waiting out the backoff
  // and the client goes back at once.
  @Test
  void theChannelToThePrimaryIsReadyAgain_itsStreamReconnectsWithoutWaitingForTheBackoff() {
    client(XdsClient.Protocol.SOTW, XdsClient.Fallback.WHEN_UNREACHABLE);
    client.watch(ResourceType.CLUSTER, "a", new RecordingWatcher());
    primary.lastSotw().fail(REFUSED);
    assertThat(client.serverInUse()).isEqualTo(SECONDARY);
    assertThat(primary.sotwCalls).hasSize(1);

    primary.connected();
    assertThat(primary.sotwCalls).hasSize(2);
    assertThat(primary.lastSotw().next().getResourceNamesList()).containsExactly("a");
    primary.lastSotw().ready();
    assertThat(client.serverInUse()).isEqualTo(PRIMARY);
    assertThat(secondary.lastSotw().cancelled).isTrue();
    clock.forward(Duration.ofMinutes(1)); // the cancelled backoff timer opens nothing more
    assertThat(primary.sotwCalls).hasSize(2);
    assertThat(secondary.sotwCalls).hasSize(1);
  }

  // gRFC A71: watchers hear of connectivity failures once every server is unreachable; the client
  // keeps trying the primary first, on its backoff.
  @Test
  void everyServerUnreachable_theWatchersAreToldAndThePrimaryIsRetried() {
    client(XdsClient.Protocol.SOTW, XdsClient.Fallback.WHEN_UNREACHABLE);
    RecordingWatcher w = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, "a", w);
    primary.lastSotw().fail(REFUSED);
    assertThat(w.take()).isEmpty();
    secondary.lastSotw().fail(REFUSED);
    assertThat(w.take()).containsExactly("error:UNAVAILABLE");
    assertThat(w.errors.get(0).message()).contains("secondary:1");

    clock.forward(Duration.ofSeconds(1));
    assertThat(primary.sotwCalls).hasSize(2);
    primary.lastSotw().respond(sotw(ResourceType.CLUSTER, "v1", "n1", edsCluster("a")));
    assertThat(client.serverInUse()).isEqualTo(PRIMARY);
    assertThat(w.take()).containsExactly("changed:a", "processed:v1");
  }

  // gRFC A71 "mid-config update": everything was cached when the primary was lost, then a watch
  // for something not cached arrives; the next failed reconnect falls back.
  @Test
  void anUncachedWatchWhileThePrimaryIsDown_a71FallsBackOnTheNextFailedAttempt() {
    client(XdsClient.Protocol.SOTW, XdsClient.Fallback.WHEN_UNCACHED);
    RecordingWatcher a = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, "a", a);
    primary.lastSotw().respond(sotw(ResourceType.CLUSTER, "v1", "n1", edsCluster("a")));
    primary.lastSotw().fail(Status.UNAVAILABLE.withDescription("server shutting down"));
    primary.lastSotw().fail(REFUSED);
    assertThat(client.serverInUse()).isEqualTo(PRIMARY);

    RecordingWatcher b = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, "b", b);
    clock.forward(Duration.ofSeconds(1));
    primary.lastSotw().fail(REFUSED);

    assertThat(client.serverInUse()).isEqualTo(SECONDARY);
    assertThat(secondary.lastSotw().next().getResourceNamesList()).containsExactly("a", "b");
    secondary.lastSotw().respond(sotw(ResourceType.CLUSTER, "s1", "n1", edsCluster("a"),
        edsCluster("b")));
    assertThat(b.take()).containsExactly("changed:b", "processed:s1");
    assertThat(a.take()).containsExactly("changed:a", "processed:v1", "error:UNAVAILABLE",
        "processed:s1"); // a is unchanged: not reported again
  }

  // gRFC A71 "fallback within each xDS authority" (A47): an authority's own servers fail over on
  // their own; the top-level servers are not touched.
  @Test
  void anAuthoritysServersFallBackOnTheirOwn() {
    FakeTransport top = new FakeTransport();
    Bootstrap.ServerInfo topServer =
        new Bootstrap.ServerInfo("top:1", Bootstrap.ChannelCreds.INSECURE, List.of());
    Bootstrap b = new Bootstrap(List.of(topServer), Node.newBuilder().setId("n").build(),
        Map.of("a.example", new Bootstrap.Authority(null, List.of(PRIMARY, SECONDARY))), null);
    client = new XdsClient(b, XdsClient.Options.defaults().withCallbackExecutor(Runnable::run)
        .withScheduler(clock).withRandom(() -> 0.5),
        server -> server.equals(PRIMARY) ? primary : server.equals(SECONDARY) ? secondary : top);
    String name = "xdstp://a.example/envoy.config.cluster.v3.Cluster/c";
    RecordingWatcher w = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, name, w);
    client.watch(ResourceType.CLUSTER, "plain", new RecordingWatcher());
    primary.lastSotw().fail(REFUSED);

    assertThat(client.serverInUse("a.example")).contains(SECONDARY);
    assertThat(client.serverInUse()).isEqualTo(topServer);
    assertThat(client.serverInUse("unknown.example")).isEmpty();
    assertThat(secondary.lastSotw().next().getResourceNamesList()).containsExactly(name);
    assertThat(top.lastSotw().next().getResourceNamesList()).containsExactly("plain");
    secondary.lastSotw().respond(sotw(ResourceType.CLUSTER, "s1", "n1", edsCluster(name)));
    assertThat(w.take()).containsExactly("changed:" + name, "processed:s1");
  }

  // A new watch while falling back goes to the server in use and to the reconnecting primary.
  @Test
  void aWatchAddedWhileOnTheFallback_isSubscribedOnBoth() {
    client(XdsClient.Protocol.SOTW, XdsClient.Fallback.WHEN_UNREACHABLE);
    client.watch(ResourceType.CLUSTER, "a", new RecordingWatcher());
    primary.lastSotw().fail(REFUSED);
    clock.forward(Duration.ofSeconds(1));
    primary.lastSotw().requests.clear();
    secondary.lastSotw().requests.clear();

    client.watch(ResourceType.CLUSTER, "b", new RecordingWatcher());
    assertThat(secondary.lastSotw().next().getResourceNamesList()).containsExactly("a", "b");
    assertThat(primary.lastSotw().next().getResourceNamesList()).containsExactly("a", "b");
  }

  private static DeltaDiscoveryResponse delta(String nonce,
      io.envoyproxy.envoy.service.discovery.v3.Resource resource) {
    return delta(nonce, List.of(resource));
  }

  private static DeltaDiscoveryResponse delta(String nonce,
      List<io.envoyproxy.envoy.service.discovery.v3.Resource> resources, String... removed) {
    return DeltaDiscoveryResponse.newBuilder().setTypeUrl(ResourceType.CLUSTER.typeUrl())
        .setNonce(nonce).setSystemVersionInfo("sys-" + nonce).addAllResources(resources)
        .addAllRemovedResources(List.of(removed)).build();
  }
}
