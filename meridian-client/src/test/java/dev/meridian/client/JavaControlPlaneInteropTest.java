package dev.meridian.client;

import static dev.meridian.client.TestResources.apiListener;
import static dev.meridian.client.TestResources.edsCluster;
import static dev.meridian.client.TestResources.edsClusterWithoutEdsConfig;
import static dev.meridian.client.TestResources.endpoints;
import static dev.meridian.client.TestResources.routes;
import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.xds.ResourceType;
import io.envoyproxy.controlplane.cache.v3.SimpleCache;
import io.envoyproxy.controlplane.cache.v3.Snapshot;
import io.envoyproxy.controlplane.server.DiscoveryServerCallbacks;
import io.envoyproxy.controlplane.server.V3DiscoveryServer;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The client against an independent server, java-control-plane 1.0.49, in every variant it serves:
 * SotW and Delta, over ADS and the per-type services (LDS, RDS, CDS, EDS).
 */
class JavaControlPlaneInteropTest {
  private final SimpleCache<String> cache = new SimpleCache<>(node -> "group");
  private final List<String> nackDetails = new CopyOnWriteArrayList<>();
  private final List<DeltaDiscoveryRequest> deltaRequests = new CopyOnWriteArrayList<>();
  private final List<DiscoveryRequest> sotwRequests = new CopyOnWriteArrayList<>();
  private Server server;
  private XdsClient client;

  static Stream<Arguments> variants() {
    return Stream.of(
        Arguments.of(XdsClient.Protocol.SOTW, XdsClient.Mode.ADS),
        Arguments.of(XdsClient.Protocol.SOTW, XdsClient.Mode.PER_TYPE),
        Arguments.of(XdsClient.Protocol.DELTA, XdsClient.Mode.ADS),
        Arguments.of(XdsClient.Protocol.DELTA, XdsClient.Mode.PER_TYPE));
  }

  @BeforeEach
  void startServer() throws Exception {
    server = newServer(0);
  }

  private Server newServer(int port) throws Exception {
    DiscoveryServerCallbacks callbacks = new DiscoveryServerCallbacks() {
      @Override
      public void onV3StreamRequest(long id, DiscoveryRequest r) {
        sotwRequests.add(r);
        if (r.hasErrorDetail()) {
          nackDetails.add(r.getVersionInfo() + "|" + r.getErrorDetail().getMessage());
        }
      }

      @Override
      public void onV3StreamDeltaRequest(long id, DeltaDiscoveryRequest r) {
        deltaRequests.add(r);
        if (r.hasErrorDetail()) {
          nackDetails.add("|" + r.getErrorDetail().getMessage());
        }
      }
    };
    V3DiscoveryServer xds = new V3DiscoveryServer(callbacks, cache);
    return NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port))
        .addService(xds.getAggregatedDiscoveryServiceImpl())
        .addService(xds.getClusterDiscoveryServiceImpl())
        .addService(xds.getEndpointDiscoveryServiceImpl())
        .addService(xds.getListenerDiscoveryServiceImpl())
        .addService(xds.getRouteDiscoveryServiceImpl())
        .build().start();
  }

  @AfterEach
  void stop() throws Exception {
    if (client != null) {
      client.close();
    }
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  private XdsClient connect(XdsClient.Protocol protocol, XdsClient.Mode mode) {
    Bootstrap b = Bootstrap.forServer("127.0.0.1:" + server.getPort(),
        Node.newBuilder().setId("interop").build());
    client = XdsClient.create(b, XdsClient.Options.defaults().withProtocol(protocol).withMode(mode));
    return client;
  }

  private void snapshot(String version, List<Cluster> clusters) {
    cache.setSnapshot("group", Snapshot.create(clusters,
        clusters.stream().map(c -> endpoints(c.getName(), 8080)).toList(),
        List.of(apiListener("l", "r")), List.of(routes("r", "*", "/", "a")), List.of(), version));
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("variants")
  void watchesFollowUpdatesAndDeletions(XdsClient.Protocol protocol, XdsClient.Mode mode) {
    snapshot("1", List.of(edsCluster("a"), edsCluster("b")));
    XdsClient c = connect(protocol, mode);
    RecordingWatcher w = new RecordingWatcher();
    RecordingWatcher eds = new RecordingWatcher();
    c.watch(ResourceType.LISTENER, "l", w);
    c.watch(ResourceType.ROUTE, "r", w);
    c.watch(ResourceType.CLUSTER, "a", w);
    c.watch(ResourceType.CLUSTER, "b", w);
    c.watch(ResourceType.ENDPOINT, "a", eds);
    Await.until("listener, route and clusters", () -> w.latest.size() == 4);
    Await.until("endpoints", () -> eds.latest.containsKey("a"));
    assertThat(w.latest.get("l").message()).isEqualTo(apiListener("l", "r"));

    // Cluster a goes away: SotW by its absence from a CDS response, Delta by removed_resources.
    // java-control-plane's SimpleCache in SotW ADS mode does not answer a request naming a
    // resource its snapshot lacks ("not responding in ADS mode"), so there the deletion can only be
    // seen through a wildcard-only subscription (on a fresh stream: 1.0.49 knows only the legacy
    // empty-list wildcard, not an explicit "*").
    if (protocol == XdsClient.Protocol.SOTW && mode == XdsClient.Mode.ADS) {
      c.close();
      RecordingWatcher all = new RecordingWatcher();
      connect(protocol, mode).watchAll(ResourceType.CLUSTER, all);
      Await.until("wildcard sees a and b", () -> all.latest.size() == 2);
      snapshot("2", List.of(edsCluster("b")));
      Await.until("a deleted", () -> events(all).contains("dne:a"));
      return;
    }
    snapshot("2", List.of(edsCluster("b")));
    Await.until("a deleted", () -> events(w).contains("dne:a"));
    assertThat(w.latest).containsKey("b");
    assertThat(w.threads).allSatisfy(t -> assertThat(t.getName()).isEqualTo("meridian-xds-callbacks"));
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("variants")
  void wildcardWatchSeesEveryCluster(XdsClient.Protocol protocol, XdsClient.Mode mode) {
    snapshot("1", List.of(edsCluster("a"), edsCluster("b")));
    RecordingWatcher w = new RecordingWatcher();
    connect(protocol, mode).watchAll(ResourceType.CLUSTER, w);
    Await.until("both clusters", () -> w.latest.size() == 2);
    snapshot("2", List.of(edsCluster("a"), edsCluster("b"), edsCluster("c")));
    Await.until("the third cluster", () -> w.latest.size() == 3);
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("variants")
  void invalidClusterIsNackedAndTheValidOnesAreUsed(XdsClient.Protocol protocol,
      XdsClient.Mode mode) {
    snapshot("1", List.of(edsCluster("a")));
    RecordingWatcher w = new RecordingWatcher();
    connect(protocol, mode).watchAll(ResourceType.CLUSTER, w);
    Await.until("cluster a", () -> w.latest.containsKey("a"));
    snapshot("2", List.of(edsCluster("a"), edsClusterWithoutEdsConfig("bad"), edsCluster("c")));
    Await.until("a NACK", () -> !nackDetails.isEmpty());
    Await.until("cluster c", () -> w.latest.containsKey("c"));
    assertThat(w.latest).doesNotContainKey("bad");
    assertThat(nackDetails.get(0)).contains("bad").contains("eds_config");
    if (protocol == XdsClient.Protocol.SOTW) {
      assertThat(nackDetails.get(0)).startsWith("1|"); // the last accepted version
    }
  }

  /**
   * Spec "Incremental xDS" and "ACK/NACK": after the server goes away and comes back, the client
   * reconnects (with backoff) and resubscribes with what it holds: SotW the last accepted version
   * and an empty nonce, Delta initial_resource_versions.
   */
  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("variants")
  void reconnectsAndResubscribesWithWhatItHolds(XdsClient.Protocol protocol, XdsClient.Mode mode)
      throws Exception {
    snapshot("1", List.of(edsCluster("a")));
    RecordingWatcher w = new RecordingWatcher();
    connect(protocol, mode).watch(ResourceType.CLUSTER, "a", w);
    Await.until("cluster a", () -> w.latest.containsKey("a"));
    int port = server.getPort();
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    Await.until("the stream error", () -> events(w).contains("error:UNAVAILABLE"));
    sotwRequests.clear();
    deltaRequests.clear();
    server = newServer(port);
    if (protocol == XdsClient.Protocol.DELTA) {
      Await.until("a Delta request", () -> !deltaRequests.isEmpty());
      DeltaDiscoveryRequest first = deltaRequests.get(0);
      assertThat(first.getResourceNamesSubscribeList()).containsExactly("a");
      assertThat(first.getInitialResourceVersionsMap()).containsKey("a");
    } else {
      Await.until("a SotW request", () -> !sotwRequests.isEmpty());
      DiscoveryRequest first = sotwRequests.get(0);
      assertThat(first.getVersionInfo()).isEqualTo("1");
      assertThat(first.getResponseNonce()).isEmpty();
      assertThat(first.getResourceNamesList()).containsExactly("a");
    }
    assertThat(w.latest).containsKey("a"); // kept across the outage
  }

  private static List<String> events(RecordingWatcher w) {
    synchronized (w) {
      return List.copyOf(w.events);
    }
  }
}
