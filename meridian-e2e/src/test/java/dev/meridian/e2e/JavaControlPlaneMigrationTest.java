package dev.meridian.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.UInt32Value;
import dev.meridian.xds.ResourceType;
import dev.meridian.server.Change;
import dev.meridian.server.DiscoveryCallbacks;
import dev.meridian.server.Meridian;
import dev.meridian.server.StreamView;
import dev.meridian.testing.RawXdsClient;
import io.envoyproxy.controlplane.cache.v3.SimpleCache;
import io.envoyproxy.controlplane.cache.v3.Snapshot;
import io.envoyproxy.controlplane.server.DiscoveryServerCallbacks;
import io.envoyproxy.controlplane.server.V3DiscoveryServer;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.AggregatedConfigSource;
import io.envoyproxy.envoy.config.core.v3.ApiVersion;
import io.envoyproxy.envoy.config.core.v3.ConfigSource;
import io.envoyproxy.envoy.config.core.v3.Locality;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.Endpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.envoyproxy.envoy.config.listener.v3.ApiListener;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.RouteMatch;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.extensions.filters.http.router.v3.Router;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.Rds;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * docs/migrating-from-java-control-plane.md, checked: the guide's java-control-plane 1.0.49 example
 * (SimpleCache + V3DiscoveryServer + callbacks) and its Meridian port serve one ADS client the same
 * resources, before and after an endpoint change, and report the same stream events; and the
 * differences the guide names (what a change resends, a NACK, the time before the first
 * publication) are what each does. {@link #javaControlPlane} and {@link #meridian} are the guide's
 * two columns, with loopback ephemeral ports instead of 18000.
 */
@Timeout(60) // every wait inside is bounded
class JavaControlPlaneMigrationTest {
  private static final long EVENT_WAIT_SECONDS = 10;

  // ---- the guide's left column: java-control-plane 1.0.49 ----

  /** A java-control-plane server and the cache the application writes to. */
  record Jcp(SimpleCache<String> cache, Server server) implements AutoCloseable {
    @Override
    public void close() throws InterruptedException {
      server.shutdownNow();
      server.awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  static Jcp javaControlPlane(Queue<String> events, boolean publish) throws Exception {
    SimpleCache<String> cache = new SimpleCache<>(node -> "mesh");
    if (publish) {
      cache.setSnapshot("mesh", Snapshot.create(List.of(cluster()), List.of(endpoints(50051)),
          List.of(listener()), List.of(routes()), List.of(), "1"));
    }

    DiscoveryServerCallbacks callbacks = new DiscoveryServerCallbacks() {
      @Override
      public void onStreamOpen(long streamId, String typeUrl) {
        events.add("open");
      }

      @Override
      public void onV3StreamRequest(long streamId, DiscoveryRequest request) {
        if (request.hasErrorDetail()) { // a NACK is a request with error_detail
          events.add("nack " + request.getTypeUrl() + ": " + request.getErrorDetail().getMessage());
        }
      }

      @Override
      public void onV3StreamDeltaRequest(long streamId, DeltaDiscoveryRequest request) {}

      @Override
      public void onStreamClose(long streamId, String typeUrl) {
        events.add("close");
      }
    };
    V3DiscoveryServer discovery = new V3DiscoveryServer(callbacks, cache);
    Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
        .addService(discovery.getAggregatedDiscoveryServiceImpl())
        .addService(discovery.getClusterDiscoveryServiceImpl())
        .addService(discovery.getEndpointDiscoveryServiceImpl())
        .addService(discovery.getListenerDiscoveryServiceImpl())
        .addService(discovery.getRouteDiscoveryServiceImpl())
        .build()
        .start();
    return new Jcp(cache, server);
  }

  /** The endpoint change, as java-control-plane's application makes it: a whole new snapshot. */
  static void moveEndpoint(Jcp jcp) {
    jcp.cache().setSnapshot("mesh", Snapshot.create(List.of(cluster()), List.of(endpoints(50052)),
        List.of(listener()), List.of(routes()), List.of(), "2"));
  }

  // ---- the guide's right column: Meridian ----

  static Meridian meridian(Queue<String> events, boolean publish) throws Exception {
    DiscoveryCallbacks callbacks = new DiscoveryCallbacks() {
      @Override
      public void onStreamOpened(StreamView stream) {
        events.add("open");
      }

      @Override
      public void onNack(StreamView stream, String typeUrl, String rejectedVersion,
          com.google.rpc.Status error) {
        events.add("nack " + typeUrl + ": " + error.getMessage());
      }

      @Override
      public void onStreamClosed(StreamView stream, String reason) {
        events.add("close");
      }
    };
    Meridian meridian = Meridian.builder()
        .grouping((node, identity) -> "mesh")
        .callbacks(callbacks)
        .build();
    if (publish) {
      meridian.publisher().set("mesh", List.of(cluster(), endpoints(50051), listener(), routes()));
    }
    return meridian.start(new InetSocketAddress("127.0.0.1", 0));
  }

  /** The endpoint change, as the port makes it: the one resource that changed. */
  static void moveEndpoint(Meridian meridian) {
    meridian.publisher().update("mesh", Change.upsert(endpoints(50052)));
  }

  // ---- the example's resources (the same on both sides) ----

  static final ConfigSource ADS = ConfigSource.newBuilder()
      .setAds(AggregatedConfigSource.getDefaultInstance())
      .setResourceApiVersion(ApiVersion.V3).build();

  static Cluster cluster() {
    return Cluster.newBuilder().setName("greeter")
        .setType(Cluster.DiscoveryType.EDS)
        .setEdsClusterConfig(Cluster.EdsClusterConfig.newBuilder().setEdsConfig(ADS))
        .build();
  }

  static ClusterLoadAssignment endpoints(int port) {
    return ClusterLoadAssignment.newBuilder().setClusterName("greeter")
        .addEndpoints(LocalityLbEndpoints.newBuilder()
            .setLocality(Locality.newBuilder().setRegion("local"))
            .setLoadBalancingWeight(UInt32Value.of(1))
            .addLbEndpoints(LbEndpoint.newBuilder().setEndpoint(Endpoint.newBuilder()
                .setAddress(Address.newBuilder().setSocketAddress(SocketAddress.newBuilder()
                    .setAddress("127.0.0.1").setPortValue(port))))))
        .build();
  }

  static Listener listener() {
    HttpConnectionManager hcm = HttpConnectionManager.newBuilder().setStatPrefix("greeter")
        .setRds(Rds.newBuilder().setRouteConfigName("greeter-routes").setConfigSource(ADS))
        .addHttpFilters(HttpFilter.newBuilder().setName("envoy.filters.http.router")
            .setTypedConfig(Any.pack(Router.getDefaultInstance())))
        .build();
    return Listener.newBuilder().setName("greeter")
        .setApiListener(ApiListener.newBuilder().setApiListener(Any.pack(hcm)))
        .build();
  }

  static RouteConfiguration routes() {
    return RouteConfiguration.newBuilder().setName("greeter-routes")
        .addVirtualHosts(VirtualHost.newBuilder().setName("greeter").addDomains("*")
            .addRoutes(Route.newBuilder().setMatch(RouteMatch.newBuilder().setPrefix(""))
                .setRoute(RouteAction.newBuilder().setCluster("greeter"))))
        .build();
  }

  // ---- the checks ----

  @Test
  void thePortServesTheSameResourcesBeforeAndAfterAnEndpointChange() throws Exception {
    BlockingQueue<String> jcpEvents = new LinkedBlockingQueue<>();
    BlockingQueue<String> meridianEvents = new LinkedBlockingQueue<>();
    String nack = "nack " + ResourceType.ENDPOINT.typeUrl() + ": port 50052 is not allowed";
    try (Jcp jcp = javaControlPlane(jcpEvents, true);
        Meridian meridian = meridian(meridianEvents, true);
        Session left = new Session(jcp.server().getPort());
        Session right = new Session(meridian.port())) {
      Map<String, Message> before = left.subscribeAll();
      assertThat(right.subscribeAll()).isEqualTo(before);
      assertThat(before).containsOnlyKeys("CDS greeter", "EDS greeter", "LDS greeter",
          "RDS greeter-routes");
      assertThat(before.get("EDS greeter")).isEqualTo(endpoints(50051));
      String jcpEds = left.versions.get(ResourceType.ENDPOINT);
      String meridianEds = right.versions.get(ResourceType.ENDPOINT);

      moveEndpoint(jcp);
      moveEndpoint(meridian);
      // java-control-plane's snapshot has one version: every type is sent again, unchanged but
      // for the endpoints. Meridian versions each resource by content: only EDS is sent.
      List<DiscoveryResponse> jcpSent = left.takeAckingAllButEds(4);
      assertThat(jcpSent).extracting(DiscoveryResponse::getTypeUrl).containsExactlyInAnyOrder(
          ResourceType.CLUSTER.typeUrl(), ResourceType.ENDPOINT.typeUrl(),
          ResourceType.LISTENER.typeUrl(), ResourceType.ROUTE.typeUrl());
      List<DiscoveryResponse> meridianSent = right.takeAckingAllButEds(1);
      assertThat(meridianSent).extracting(DiscoveryResponse::getTypeUrl)
          .containsExactly(ResourceType.ENDPOINT.typeUrl());
      right.client.expectNoResponse();
      Map<String, Message> after = left.state();
      assertThat(right.state()).isEqualTo(after);
      assertThat(after.get("EDS greeter")).isEqualTo(endpoints(50052));
      assertThat(after).containsEntry("CDS greeter", before.get("CDS greeter"));

      // the client rejects the new endpoints: both report the NACK with the client's message
      left.client.nack(eds(jcpSent), jcpEds, "port 50052 is not allowed", "greeter");
      right.client.nack(eds(meridianSent), meridianEds, "port 50052 is not allowed", "greeter");
      // java-control-plane answers a NACK by sending the version in force again (the client
      // holds "1", the snapshot is at "2"); Meridian sends nothing until the config changes
      assertThat(left.client.take(ResourceType.ENDPOINT).getVersionInfo()).isEqualTo("2");
      right.client.expectNoResponse();

      left.client.close(); // half-close, as a client that is done
      right.client.close();
      assertThat(left.client.awaitClose().getCode()).isEqualTo(Status.Code.OK);
      assertThat(right.client.awaitClose().getCode()).isEqualTo(Status.Code.OK);
      assertThat(events(jcpEvents, 3)).containsExactly("open", nack, "close");
      assertThat(events(meridianEvents, 3)).containsExactly("open", nack, "close");
    }
  }

  private static DiscoveryResponse eds(List<DiscoveryResponse> sent) {
    return sent.stream().filter(r -> r.getTypeUrl().equals(ResourceType.ENDPOINT.typeUrl()))
        .findFirst().orElseThrow();
  }

  @Test
  void beforeTheFirstPublicationJavaControlPlaneWaitsAndMeridianRefuses() throws Exception {
    try (Jcp jcp = javaControlPlane(new LinkedBlockingQueue<>(), false);
        Meridian meridian = meridian(new LinkedBlockingQueue<>(), false);
        Session left = new Session(jcp.server().getPort());
        Session right = new Session(meridian.port())) {
      left.client.send(ResourceType.CLUSTER, "", "");
      right.client.send(ResourceType.CLUSTER, "", "");
      // Meridian: UNAVAILABLE, so the client retries (another replica may answer) rather than
      // wait on a stream that nothing may ever answer
      assertThat(right.client.awaitClose().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
      left.client.expectNoResponse();
      assertThat(left.client.closed()).isNotDone();
      // java-control-plane answers once a snapshot is set
      jcp.cache().setSnapshot("mesh", Snapshot.create(List.of(cluster()), List.of(),
          List.of(), List.of(), List.of(), "1"));
      assertThat(left.client.take(ResourceType.CLUSTER).getResourcesCount()).isEqualTo(1);
    }
  }

  /** The first {@code n} events, each waited for within a bound. */
  private static List<String> events(BlockingQueue<String> events, int n)
      throws InterruptedException {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String e = events.poll(EVENT_WAIT_SECONDS, TimeUnit.SECONDS);
      if (e == null) {
        throw new AssertionError("only " + out + " within " + EVENT_WAIT_SECONDS + " s");
      }
      out.add(e);
    }
    return out;
  }

  /**
   * One ADS (SotW) client, as Envoy or grpc-java would drive it: wildcard CDS and LDS, then the
   * EDS and RDS names they refer to; every response ACKed. Keeps the latest resources per type.
   */
  private static final class Session implements AutoCloseable {
    final ManagedChannel channel;
    final RawXdsClient.Sotw client;
    final Map<String, Message> resources = new TreeMap<>();
    /** The version ACKed, per type. */
    final Map<ResourceType, String> versions = new java.util.EnumMap<>(ResourceType.class);
    final Map<ResourceType, String[]> names = Map.of(
        ResourceType.CLUSTER, new String[0], ResourceType.LISTENER, new String[0],
        ResourceType.ENDPOINT, new String[] {"greeter"},
        ResourceType.ROUTE, new String[] {"greeter-routes"});

    Session(int port) {
      channel = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
      client = RawXdsClient.sotwAds(channel, "client-1");
    }

    Map<String, Message> subscribeAll() throws Exception {
      for (ResourceType t : List.of(ResourceType.CLUSTER, ResourceType.ENDPOINT,
          ResourceType.LISTENER, ResourceType.ROUTE)) {
        record(client.subscribe(t, names.get(t)), true);
      }
      return state();
    }

    /** The next {@code n} responses; each but an EDS one is ACKed (the test answers that). */
    List<DiscoveryResponse> takeAckingAllButEds(int n) throws Exception {
      List<DiscoveryResponse> out = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        DiscoveryResponse r = client.take();
        boolean eds = r.getTypeUrl().equals(ResourceType.ENDPOINT.typeUrl());
        record(r, !eds);
        out.add(r);
      }
      return out;
    }

    private void record(DiscoveryResponse r, boolean ack) throws InvalidProtocolBufferException {
      ResourceType type = ResourceType.fromTypeUrl(r.getTypeUrl()).orElseThrow();
      resources.keySet().removeIf(k -> k.startsWith(type.abbreviation() + " "));
      for (Any any : r.getResourcesList()) {
        Message m = any.unpack(type.messageClass());
        resources.put(type.abbreviation() + " " + type.nameOf(m), m);
      }
      if (ack) {
        versions.put(type, r.getVersionInfo());
        client.ack(r, names.get(type));
      }
    }

    Map<String, Message> state() {
      return new TreeMap<>(resources);
    }

    @Override
    public void close() throws InterruptedException {
      client.close();
      channel.shutdownNow();
      channel.awaitTermination(5, TimeUnit.SECONDS);
    }
  }
}
