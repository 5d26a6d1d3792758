package dev.meridian.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.testing.RawXdsClient;
import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.xds.shaded.io.envoyproxy.envoy.admin.v3.ClientResourceStatus;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * xDS federation (gRFC A47, xDS TP1 "URI-based xDS resource names") with a real grpc-java 1.85.1
 * client: its bootstrap has an {@code authorities} entry for Meridian and xdstp listener name
 * templates, and Meridian's config names every resource (Listener, RouteConfiguration, Cluster,
 * ClusterLoadAssignment) and every reference between them with xdstp names of that authority
 * (issue 26). grpc-java 1.85.1 has federation on without any flag (its
 * {@code GRPC_EXPERIMENTAL_XDS_FEDERATION} switch is gone) and speaks SotW ADS, where Meridian
 * serves single xdstp names (glob collections are Delta-only, and gRPC does not use them).
 */
@Timeout(90) // every wait inside is bounded; this only guards against a hung client library
class FederationE2eTest {
  static final Duration WAIT = Duration.ofSeconds(20);
  static final String AUTHORITY = "meridian.test";
  static final String XDSTP = "xdstp://" + AUTHORITY + "/";
  /** gRFC A47: a target without an authority ({@code xds:///NAME}) names its listener so. */
  static final String DEFAULT_TEMPLATE = XDSTP + "envoy.config.listener.v3.Listener/default/%s";
  /** gRFC A47: a target {@code xds://meridian.test/NAME} uses its authority's own template. */
  static final String AUTHORITY_TEMPLATE = XDSTP + "envoy.config.listener.v3.Listener/%s";

  static final String ROUTES = XDSTP + "envoy.config.route.v3.RouteConfiguration/greeter/routes";
  // Context parameters (TP1), written in canonical form (sorted by key) as the config requires.
  static final String CLUSTER = XDSTP + "envoy.config.cluster.v3.Cluster/greeter/v1?env=e2e&tier=1";
  static final String ENDPOINTS =
      XDSTP + "envoy.config.endpoint.v3.ClusterLoadAssignment/greeter/v1?env=e2e&tier=1";

  @TempDir Path dir;
  Greeter.Backend v1;
  Greeter.Backend v2;
  Csds csds;
  ManagedChannel raw;

  @BeforeEach
  void backends() throws Exception {
    v1 = new Greeter.Backend("v1");
    v2 = new Greeter.Backend("v2");
    csds = new Csds();
  }

  @AfterEach
  void stop() throws Exception {
    if (raw != null) {
      raw.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    csds.close();
    v1.close();
    v2.close();
  }

  /**
   * gRFC A47 bootstrap: Meridian is the server of authority {@code meridian.test}. The top-level
   * {@code xds_servers} (still required) is a closed loopback port: every name the client needs is
   * of that authority, so only the authority's server may be asked, and RPCs prove it was.
   */
  static Map<String, Object> federationBootstrap(int meridianPort, String nodeId) throws IOException {
    return Map.of(
        "xds_servers", List.of(server(closedPort())),
        "node", Map.of("id", nodeId, "cluster", "e2e"),
        "client_default_listener_resource_name_template", DEFAULT_TEMPLATE,
        "authorities", Map.of(AUTHORITY, Map.of(
            "xds_servers", List.of(server(meridianPort)),
            "client_listener_resource_name_template", AUTHORITY_TEMPLATE)));
  }

  private static Map<String, Object> server(int port) {
    return Map.of("server_uri", "127.0.0.1:" + port,
        "channel_creds", List.of(Map.of("type", "insecure")), "server_features", List.of("xds_v3"));
  }

  private static int closedPort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  /** Listener {@code listenerName} → ROUTES → CLUSTER (EDS service ENDPOINTS) → {@code port}. */
  static Config federated(String listenerName, int port) {
    return new Config().add(Config.clientListener(listenerName, ROUTES))
        .add(Config.routes(ROUTES, Config.toCluster(CLUSTER)))
        .add(Config.edsCluster(CLUSTER, ENDPOINTS))
        .add(Config.endpoints(ENDPOINTS, port));
  }

  @Test
  void everyResourceNamedXdstpRoutesRpcsThroughTheAuthorityAndAnEndpointMoveIsFollowed()
      throws Exception {
    String listener = DEFAULT_TEMPLATE.replace("%s", "greeter");
    try (Meridian meridian = Meridian.start(dir, federated(listener, v1.port()));
        XdsTestClient client = new XdsTestClient(
            federationBootstrap(meridian.xdsPort(), "fed-node"), "", "greeter")) {
      // gRFC A47: xds:///greeter has no authority, so the listener is named by the top-level
      // client_default_listener_resource_name_template; the xdstp names inside the resources (RDS
      // name, cluster, EDS service name) go to their authority's server, Meridian.
      assertThat(client.helloWhenReady()).isEqualTo("v1");
      for (String[] r : new String[][] {{Csds.LDS, listener}, {Csds.RDS, ROUTES},
          {Csds.CDS, CLUSTER}, {Csds.EDS, ENDPOINTS}}) {
        Await.value(WAIT, r[1] + " ACKED",
            () -> csds.withStatus(client, r[0], r[1], ClientResourceStatus.ACKED));
      }
      // Only those four: the client asked for nothing under a non-xdstp name.
      assertThat(csds.resources(client)).hasSize(4)
          .allSatisfy(r -> assertThat(r.getName()).startsWith(XDSTP));

      // A config change reaches the client through the same xdstp names: the endpoint moves to v2.
      long written = System.nanoTime();
      meridian.write(federated(listener, v2.port()));
      List<String> seen = new ArrayList<>();
      Await.until(WAIT, "traffic on v2", () -> {
        seen.add(client.helloOrError());
        return seen.get(seen.size() - 1).equals("v2");
      });
      Measurements.record("xdstp names (A47): endpoint moved -> first RPC on the new backend",
          System.nanoTime() - written);
      assertThat(seen).allMatch(r -> r.equals("v1") || r.equals("v2"));
      for (int i = 0; i < 20; i++) {
        assertThat(client.hello()).isEqualTo("v2");
      }
      assertThat(meridian.nacks()).isEmpty();
    }
  }

  @Test
  void aTargetNamingTheAuthorityUsesItsTemplateWithTheNamePercentEncoded() throws Exception {
    // gRFC A47: for xds://meridian.test/NAME the authority's client_listener_resource_name_template
    // applies, and NAME is percent-encoded into it (a space becomes %20) since the result is a URI.
    String listener = AUTHORITY_TEMPLATE.replace("%s", "greeter%20east");
    try (Meridian meridian = Meridian.start(dir, federated(listener, v1.port()));
        XdsTestClient client = new XdsTestClient(
            federationBootstrap(meridian.xdsPort(), "fed-node"), AUTHORITY, "greeter%20east")) {
      assertThat(client.helloWhenReady()).isEqualTo("v1");
      Await.value(WAIT, listener + " ACKED",
          () -> csds.withStatus(client, Csds.LDS, listener, ClientResourceStatus.ACKED));
      assertThat(meridian.nacks()).isEmpty();
    }
  }

  @Test
  void aServerForAnotherAuthorityAnswersNotFoundAtOnceYetGrpcJavaWaitsItsFetchTimer()
      throws Exception {
    String listener = DEFAULT_TEMPLATE.replace("%s", "greeter");
    // serve --authority elsewhere.test: meridian.test's resources are in the file but not served.
    try (Meridian meridian = Meridian.startWith(dir, federated(listener, v1.port()),
            o -> o.withAuthorities(Set.of("elsewhere.test")))) {
      // What Meridian says (TP3 resource_errors), seen by a raw SotW ADS client: the full-state
      // LDS response carries no listener and a NOT_FOUND error for the name, at once.
      raw = NettyChannelBuilder.forAddress("127.0.0.1", meridian.xdsPort()).usePlaintext().build();
      try (RawXdsClient.Sotw sotw = RawXdsClient.sotwAds(raw, "raw-node")) {
        DiscoveryResponse r = sotw.subscribe(ResourceType.LISTENER, listener);
        assertThat(r.getResourcesList()).isEmpty();
        assertThat(r.getResourceErrorsList()).singleElement().satisfies(e -> {
          assertThat(e.getResourceName().getName()).isEqualTo(listener);
          assertThat(e.getErrorDetail().getCode()).isEqualTo(Status.Code.NOT_FOUND.value());
        });
      }

      long started = System.nanoTime();
      try (XdsTestClient client = new XdsTestClient(
          federationBootstrap(meridian.xdsPort(), "fed-node"), "", "greeter")) {
        client.helloOrError(); // leaves idle: resolution starts
        // grpc-java 1.85.1 reads no resource_errors (gRFC A88 is not in its XdsClient), and a
        // full-state LDS response without the name is "too early to conclude absence" while the
        // name's 15 s initial fetch timer runs (XdsClientImpl.ResourceSubscriber.onAbsent); so it
        // decides the listener does not exist only when that timer fires.
        Await.value(Duration.ofSeconds(25), "listener DOES_NOT_EXIST", () -> csds.withStatus(
            client, Csds.LDS, listener, ClientResourceStatus.DOES_NOT_EXIST));
        long concluded = System.nanoTime() - started;
        Measurements.record("another authority served: client start -> grpc-java's listener"
            + " DOES_NOT_EXIST", concluded);
        assertThat(Duration.ofNanos(concluded)).isGreaterThan(Duration.ofSeconds(14));
        Status failed = Await.value(WAIT, "an RPC to fail UNAVAILABLE", () -> {
          try {
            client.hello();
            return null;
          } catch (StatusRuntimeException e) {
            return e.getStatus().getCode() == Status.Code.UNAVAILABLE ? e.getStatus() : null;
          }
        });
        Measurements.note("grpc-java 1.85.1, listener of an authority not served: "
            + failed.getDescription());
        // The timer's own words (not "does not exist", which a server's answer would give).
        assertThat(failed.getDescription()).contains(
            "NOT_FOUND: Timed out waiting for resource " + listener + " from xDS server");
      }
      assertThat(meridian.nacks()).isEmpty();
    }
  }
}
