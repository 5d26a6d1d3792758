package dev.meridian.server;

import static dev.meridian.xds.ResourceType.CLUSTER;
import static dev.meridian.xds.ResourceType.ENDPOINT;
import static dev.meridian.xds.ResourceType.ROUTE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.Any;
import com.google.protobuf.Message;
import dev.meridian.testing.RawXdsClient;
import dev.meridian.testing.TestCerts;
import dev.meridian.testing.TlsServers;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.Endpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.RouteMatch;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.status.v3.ClientStatusRequest;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The embedding API (issue 22) over real gRPC on loopback: config published from code reaches
 * clients of every variant as a file reload does, nodes go where the application's function puts
 * them, callbacks see streams without slowing them, and two Meridians in one JVM share nothing.
 */
class EmbeddingTest {
  private final List<AutoCloseable> open = new ArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
  }

  private <T extends AutoCloseable> T track(T c) {
    open.add(c);
    return c;
  }

  private Meridian started(Meridian.Builder b) throws Exception {
    return track(b.build()).start(new InetSocketAddress("127.0.0.1", 0));
  }

  private ManagedChannel channel(int port) {
    ManagedChannel c = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
    track(() -> c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
    return c;
  }

  private RawXdsClient.Sotw sotw(Meridian m, Node node) {
    return track(RawXdsClient.sotwAds(channel(m.port()), node));
  }

  private RawXdsClient.Delta delta(Meridian m, String nodeId) {
    return track(RawXdsClient.deltaAds(channel(m.port()), nodeId));
  }

  static Node node(String id, String cluster) {
    return Node.newBuilder().setId(id).setCluster(cluster).build();
  }

  static Cluster cluster(String name) {
    return Cluster.newBuilder().setName(name).setType(Cluster.DiscoveryType.EDS)
        .setConnectTimeout(com.google.protobuf.Duration.newBuilder().setSeconds(1)).build();
  }

  static ClusterLoadAssignment endpoints(String cluster, int... ports) {
    LocalityLbEndpoints.Builder l = LocalityLbEndpoints.newBuilder();
    for (int p : ports) {
      l.addLbEndpoints(LbEndpoint.newBuilder().setEndpoint(Endpoint.newBuilder().setAddress(
          Address.newBuilder().setSocketAddress(SocketAddress.newBuilder()
              .setAddress("10.0.0.1").setPortValue(p)))));
    }
    return ClusterLoadAssignment.newBuilder().setClusterName(cluster).addEndpoints(l).build();
  }

  static RouteConfiguration routeTo(String name, String cluster) {
    return RouteConfiguration.newBuilder().setName(name).addVirtualHosts(VirtualHost.newBuilder()
        .setName("all").addDomains("*").addRoutes(Route.newBuilder()
            .setMatch(RouteMatch.newBuilder().setPrefix("/"))
            .setRoute(RouteAction.newBuilder().setCluster(cluster)))).build();
  }

  static List<String> names(DiscoveryResponse r) throws Exception {
    List<String> names = new ArrayList<>();
    for (Any a : r.getResourcesList()) {
      names.add(a.getTypeUrl().endsWith("Cluster") ? a.unpack(Cluster.class).getName()
          : a.unpack(ClusterLoadAssignment.class).getClusterName());
    }
    return names;
  }

  static void await(BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + RawXdsClient.WAIT.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what);
      }
      Thread.sleep(5);
    }
  }

  // Spec "Knowing When a Requested Resource Does Not Exist": an empty config would tell a client
  // every resource is gone, so nothing is served before the application published.
  @Test
  void callsFailUnavailableUntilTheFirstPublication() throws Exception {
    Meridian m = started(Meridian.builder());
    assertThat(m.isReady()).isFalse();
    RawXdsClient.Sotw early = sotw(m, node("n1", "c"));
    early.send(CLUSTER, "", "");
    assertThat(early.awaitClose().getCode()).isEqualTo(Status.Code.UNAVAILABLE);

    m.publisher().set("default", List.of(cluster("a")));
    assertThat(m.isReady()).isTrue();
    RawXdsClient.Sotw client = sotw(m, node("n1", "c"));
    assertThat(names(client.subscribe(CLUSTER))).containsExactly("a");
  }

  /** Issue 25: the stream and request-rate bounds hold on the application's own gRPC server. */
  @Test
  void maxStreamsAndMaxRequestRateHoldOnTheApplicationsOwnServer() throws Exception {
    Meridian m = track(Meridian.builder().maxStreams(2).maxRequestRate(1).build());
    NettyServerBuilder sb = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
        .directExecutor();
    m.xdsServices().forEach(sb::addService);
    Server own = sb.build().start();
    track(() -> own.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
    m.publisher().set("default", List.of(cluster("a")));
    ManagedChannel ch = channel(own.getPort());
    RawXdsClient.Sotw quiet = track(RawXdsClient.sotwAds(ch, "quiet"));
    quiet.ack(quiet.subscribe(CLUSTER));
    RawXdsClient.Sotw spammer = track(RawXdsClient.sotwAds(ch, "spammer"));
    DiscoveryResponse cds = spammer.subscribe(CLUSTER);
    RawXdsClient.Sotw third = track(RawXdsClient.sotwAds(ch, "third"));
    third.send(CLUSTER, "", "");
    assertThat(third.awaitClose().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    for (int i = 0; i < 50 && !spammer.closed().isDone(); i++) {
      spammer.ack(cds); // beyond a burst of ten
    }
    assertThat(spammer.awaitClose().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    m.publisher().set("default", List.of(cluster("a"), cluster("b")));
    assertThat(quiet.take(CLUSTER).getResourcesCount()).isEqualTo(2);
  }

  @Test
  void maxStreamsPerPeerHoldsOnTheApplicationsOwnServer() throws Exception {
    Meridian m = track(Meridian.builder().maxStreamsPerPeer(1).build());
    NettyServerBuilder sb = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
        .directExecutor();
    m.xdsServices().forEach(sb::addService);
    Server own = sb.build().start();
    track(() -> own.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
    m.publisher().set("default", List.of(cluster("a")));
    RawXdsClient.Sotw first = track(RawXdsClient.sotwAds(channel(own.getPort()), "first"));
    first.ack(first.subscribe(CLUSTER));
    RawXdsClient.Sotw second = track(RawXdsClient.sotwAds(channel(own.getPort()), "second"));
    second.send(CLUSTER, "", "");
    Status refused = second.awaitClose();
    assertThat(refused.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(refused.getDescription()).contains("address 127.0.0.1");
    assertThat(first.closed()).isNotDone();
  }

  @Test
  void nodesAreServedTheGroupTheApplicationsFunctionPicks() throws Exception {
    Meridian m = started(Meridian.builder().grouping(NodeGrouping.byCluster()));
    m.publisher().set("payments", List.of(cluster("pay-db")));
    m.publisher().set("orders", List.of(cluster("orders-db"), cluster("orders-cache")));

    assertThat(names(sotw(m, node("p-1", "payments")).subscribe(CLUSTER)))
        .containsExactly("pay-db");
    assertThat(names(sotw(m, node("o-1", "orders")).subscribe(CLUSTER)))
        .containsExactly("orders-cache", "orders-db");
    // A group nobody published serves nothing until it is: an empty wildcard answer.
    RawXdsClient.Sotw stranger = sotw(m, node("s-1", "unknown"));
    DiscoveryResponse nothing = stranger.subscribe(CLUSTER);
    assertThat(nothing.getResourcesCount()).isZero();
    stranger.ack(nothing);
    m.publisher().set("unknown", List.of(cluster("late")));
    assertThat(names(stranger.take(CLUSTER))).containsExactly("late");
  }

  @Test
  void aNodeTheGroupingRefusesIsDeniedWithItsReason() throws Exception {
    Meridian m = started(Meridian.builder()
        .grouping((node, identity) -> node.getId().startsWith("ok-") ? "default" : null));
    m.publisher().set("default", List.of(cluster("a")));
    RawXdsClient.Sotw refused = sotw(m, node("intruder", "c"));
    refused.send(CLUSTER, "", "");
    Status s = refused.awaitClose();
    assertThat(s.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
    assertThat(s.getDescription()).contains("intruder").contains("no group");
    assertThat(names(sotw(m, node("ok-1", "c")).subscribe(CLUSTER))).containsExactly("a");
  }

  // Spec "ACK/NACK and resource instance versioning": versions come from content, so publishing
  // the same content again is no change and nothing is sent.
  @Test
  void republishingTheSameContentSendsNothing() throws Exception {
    Meridian m = started(Meridian.builder());
    m.publisher().set("default", List.of(cluster("a"), endpoints("a", 80)));
    RawXdsClient.Sotw client = sotw(m, node("n1", "c"));
    DiscoveryResponse first = client.subscribe(CLUSTER);
    client.ack(first);

    // Equal messages built anew: same bytes, same versions.
    Publication again = m.publisher().set("default", List.of(cluster("a"), endpoints("a", 80)));
    assertThat(again.changed()).isZero();
    client.expectNoResponse();

    Publication changed = m.publisher().update("default", Change.upsert(cluster("b")));
    assertThat(changed.changed()).isEqualTo(1);
    DiscoveryResponse next = client.take(CLUSTER);
    assertThat(names(next)).containsExactly("a", "b");
    assertThat(next.getVersionInfo()).isNotEqualTo(first.getVersionInfo());
  }

  // Spec "Incremental xDS": an upsert reaches Delta clients as that resource alone; a delete as
  // removed_resources.
  @Test
  void incrementalChangesReachDeltaClientsAsUpsertsAndRemovals() throws Exception {
    Meridian m = started(Meridian.builder());
    m.publisher().set("default", List.of(cluster("a"), cluster("b"), endpoints("a", 80)));
    RawXdsClient.Delta client = delta(m, "n1");
    DeltaDiscoveryResponse first = client.subscribe(ENDPOINT, "a");
    client.ack(first);

    m.publisher().update("default", Change.upsert(endpoints("a", 80, 81)));
    DeltaDiscoveryResponse update = client.take(ENDPOINT);
    assertThat(update.getResourcesCount()).isEqualTo(1);
    assertThat(update.getResources(0).getResource().unpack(ClusterLoadAssignment.class)
        .getEndpoints(0).getLbEndpointsCount()).isEqualTo(2);
    client.ack(update);

    m.publisher().update("default", Change.builder()
        .delete(ClusterLoadAssignment.class, "a").delete(Cluster.class, "b").build());
    DeltaDiscoveryResponse removal = client.take(ENDPOINT);
    assertThat(removal.getRemovedResourcesList()).containsExactly("a");
    assertThat(m.publisher().resources("default")).extracting(r -> ((Cluster) r).getName())
        .containsExactly("a");
  }

  @Test
  void anysAreUnpackedAndWhatIsNotAnXdsResourceIsRefusedWithoutAChange() throws Exception {
    Meridian m = started(Meridian.builder());
    m.publisher().set("default", List.of(Any.pack(cluster("packed"))));
    assertThat(names(sotw(m, node("n1", "c")).subscribe(CLUSTER))).containsExactly("packed");

    assertThatThrownBy(() -> m.publisher().set("default", List.of(cluster("x"),
        Node.getDefaultInstance())))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not an xDS resource");
    assertThatThrownBy(() -> m.publisher().set("default", List.of(cluster("x"), cluster("x"))))
        .hasMessageContaining("two CDS resources named 'x'");
    assertThatThrownBy(() -> m.publisher().set("default", List.of(Cluster.getDefaultInstance())))
        .hasMessageContaining("without a name");
    // TP1: requests match xdstp names canonically, so a name in another spelling is refused as a
    // config file's would be, naming the canonical one.
    assertThatThrownBy(() -> m.publisher().set("default", List.of(cluster(
        "xdstp://a.example/envoy.config.cluster.v3.Cluster/c?b=1&a=2"))))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("?a=2&b=1");
    assertThat(m.publisher().resources("default")).extracting(r -> ((Cluster) r).getName())
        .containsExactly("packed");
  }

  @Test
  void mountedStatusShowsThePublishersLastPublicationAndItsLastRefusalAndSlashlessRedirects()
      throws Exception {
    Meridian m = started(Meridian.builder().validation(Validation.REJECT));
    m.publisher().set("default", List.of(cluster("a"), endpoints("a", 80), routeTo("r", "a")));
    assertThatThrownBy(() -> m.publisher().update("default", Change.upsert(routeTo("r", "gone"))))
        .isInstanceOf(InvalidConfigException.class);
    com.sun.net.httpserver.HttpServer app = com.sun.net.httpserver.HttpServer.create(
        new InetSocketAddress("127.0.0.1", 0), 0);
    app.createContext("/meridian", m.admin().httpHandler());
    app.start();
    try {
      HttpClient http = HttpClient.newHttpClient();
      String base = "http://127.0.0.1:" + app.getAddress().getPort() + "/meridian";
      HttpResponse<String> status = http.send(HttpRequest.newBuilder(URI.create(base + "/status"))
          .build(), HttpResponse.BodyHandlers.ofString());
      assertThat(status.statusCode()).isEqualTo(200);
      com.google.gson.JsonObject s = com.google.gson.JsonParser.parseString(status.body())
          .getAsJsonObject();
      // The refusal was the last publication; the set before it is what is served.
      assertThat(s.getAsJsonObject("last_reload").get("result").getAsString()).isEqualTo("failed");
      assertThat(s.getAsJsonObject("last_failed_reload").getAsJsonArray("errors").toString())
          .contains("gone");
      assertThat(s.getAsJsonArray("groups").get(0).getAsJsonObject().get("total").getAsInt())
          .isEqualTo(3);
      HttpResponse<String> slashless = http.send(HttpRequest.newBuilder(URI.create(base)).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(slashless.statusCode()).isEqualTo(301);
      assertThat(slashless.headers().firstValue("Location")).hasValue("/meridian/");
      HttpResponse<String> page = http.send(HttpRequest.newBuilder(URI.create(base + "/")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(page.statusCode()).isEqualTo(200);
      assertThat(page.body()).contains("<script src=\"status.js\"></script>");
    } finally {
      app.stop(0);
    }
  }

  @Test
  void validationRejectRefusesDanglingReferencesAndChangesNothing() throws Exception {
    Meridian m = started(Meridian.builder().validation(Validation.REJECT));
    m.publisher().set("default", List.of(cluster("a"), endpoints("a", 80), routeTo("r", "a")));
    assertThatThrownBy(() -> m.publisher().update("default", Change.upsert(routeTo("r", "gone"))))
        .isInstanceOf(InvalidConfigException.class)
        .satisfies(e -> assertThat(((InvalidConfigException) e).problems())
            .anySatisfy(p -> assertThat(p).contains("gone")));
    RawXdsClient.Sotw client = sotw(m, node("n1", "c"));
    DiscoveryResponse routes = client.subscribe(ROUTE, "r");
    assertThat(routes.getResources(0).unpack(RouteConfiguration.class).getVirtualHosts(0)
        .getRoutes(0).getRoute().getCluster()).isEqualTo("a");

    Meridian warn = started(Meridian.builder().validation(Validation.WARN));
    Publication p = warn.publisher().set("default", List.of(routeTo("r", "gone")));
    assertThat(p.warnings()).anySatisfy(w -> assertThat(w).contains("gone"));
  }

  /** Collects callback events as text, in the order they were delivered. */
  static final class Recorder implements DiscoveryCallbacks {
    final BlockingQueue<String> events = new LinkedBlockingQueue<>();

    @Override
    public void onStreamOpened(StreamView s) {
      events.add("opened " + s.node().getId() + " group=" + s.group() + " delta=" + s.delta()
          + " service=" + s.service());
    }

    @Override
    public void onRequest(StreamView s, Message request) {
      events.add("request " + request.getClass().getSimpleName());
    }

    @Override
    public void onResponse(StreamView s, String typeUrl, Message response) {
      events.add("response " + typeUrl.substring(typeUrl.lastIndexOf('.') + 1));
    }

    @Override
    public void onAck(StreamView s, String typeUrl, String version) {
      events.add("ack " + typeUrl.substring(typeUrl.lastIndexOf('.') + 1));
    }

    @Override
    public void onNack(StreamView s, String typeUrl, String rejected, com.google.rpc.Status e) {
      events.add("nack " + typeUrl.substring(typeUrl.lastIndexOf('.') + 1) + " " + e.getMessage());
    }

    @Override
    public void onStreamClosed(StreamView s, String reason) {
      events.add("closed " + s.node().getId());
    }

    String next() throws InterruptedException {
      String e = events.poll(RawXdsClient.WAIT.toMillis(), TimeUnit.MILLISECONDS);
      if (e == null) {
        throw new AssertionError("no callback event within " + RawXdsClient.WAIT);
      }
      return e;
    }
  }

  @Test
  void callbacksSeeAStreamsLifeInOrderWithTheClientsNackMessage() throws Exception {
    Recorder recorder = new Recorder();
    Meridian m = started(Meridian.builder().callbacks(recorder));
    m.publisher().set("default", List.of(cluster("a")));
    RawXdsClient.Sotw client = sotw(m, node("n1", "c"));
    DiscoveryResponse r = client.subscribe(CLUSTER);
    assertThat(recorder.next()).isEqualTo("opened n1 group=default delta=false service=ads");
    assertThat(recorder.next()).isEqualTo("request DiscoveryRequest");
    assertThat(recorder.next()).isEqualTo("response Cluster");
    client.ack(r);
    assertThat(recorder.next()).isEqualTo("request DiscoveryRequest");
    assertThat(recorder.next()).isEqualTo("ack Cluster");
    m.publisher().update("default", Change.upsert(cluster("b")));
    DiscoveryResponse bad = client.take(CLUSTER);
    assertThat(recorder.next()).isEqualTo("response Cluster");
    client.nack(bad, r.getVersionInfo(), "cluster b: unsupported");
    assertThat(recorder.next()).isEqualTo("request DiscoveryRequest");
    assertThat(recorder.next()).isEqualTo("nack Cluster cluster b: unsupported");
    client.close();
    assertThat(recorder.next()).isEqualTo("closed n1");
  }

  @Test
  void aSlowCallbackDelaysNoPushAndAFullQueueDropsAndCounts() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    DiscoveryCallbacks stuck = new DiscoveryCallbacks() {
      @Override
      public void onStreamOpened(StreamView stream) {
        try {
          release.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    };
    Meridian m = started(Meridian.builder().callbacks(stuck, 4));
    m.publisher().set("default", List.of(cluster("a")));
    RawXdsClient.Sotw client = sotw(m, node("n1", "c"));
    DiscoveryResponse r = client.subscribe(CLUSTER);
    client.ack(r);
    for (int i = 0; i < 10; i++) { // each push is a response and an ACK event at least
      m.publisher().update("default", Change.upsert(cluster("c" + i)));
      client.ack(client.take(CLUSTER));
    }
    assertThat(m.callbackEventsDropped()).isPositive();
    release.countDown();
  }

  // gRFC A29/issue 20: on the application's own server with its own mTLS, a stream's identity is
  // its client certificate's SPIFFE ID, and the grouping function sees it.
  @Test
  void servicesOnTheApplicationsOwnServerCarryTheClientIdentityToTheGrouping(@TempDir Path dir)
      throws Exception {
    TestCerts.Ca ca = TestCerts.ca("app-ca");
    Path caFile = ca.writeCert(dir.resolve("ca.crt"));
    TestCerts.Written serverFiles = ca.leaf("app").loopback().issue().write(dir, "server");
    TestCerts.Written clientFiles = ca.leaf("payments").uri("spiffe://example.org/ns/payments/sa/api")
        .issue().write(dir, "client");

    Meridian m = track(Meridian.builder().grouping((node, identity) ->
        identity != null && identity.contains("/ns/payments/") ? "payments" : "public").build());
    m.publisher().setAll(java.util.Map.of("payments", List.of(cluster("pay-db")),
        "public", List.of(cluster("www"))));
    NettyServerBuilder b = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0),
        TlsServers.credentials(serverFiles, caFile)).directExecutor();
    m.xdsServices().forEach(b::addService);
    Server app = b.build().start();
    track(() -> app.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
    track(m::close); // Meridian first: it drains its streams before the application's server stops

    ManagedChannel c = NettyChannelBuilder.forAddress("localhost", app.getPort(),
        TlsChannelCredentials.newBuilder().trustManager(caFile.toFile())
            .keyManager(clientFiles.cert().toFile(), clientFiles.key().toFile()).build()).build();
    track(() -> c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
    RawXdsClient.Sotw client = track(RawXdsClient.sotwAds(c, node("anything", "claimed")));
    assertThat(names(client.subscribe(CLUSTER))).containsExactly("pay-db");
    assertThat(m.admin().clientsJson()).contains("spiffe://example.org/ns/payments/sa/api");
  }

  @Test
  void underMtlsAPublicationInliningAPrivateKeyIsRefusedAndChangesNothing(@TempDir Path dir)
      throws Exception {
    TestCerts.Ca ca = TestCerts.ca("app-ca");
    Path caFile = ca.writeCert(dir.resolve("ca.crt"));
    TestCerts.Written serverFiles = ca.leaf("app").loopback().issue().write(dir, "server");
    Cluster leaky = cluster("leaky").toBuilder().setTransportSocket(
        io.envoyproxy.envoy.config.core.v3.TransportSocket.newBuilder().setName("tls")
            .setTypedConfig(Any.pack(io.envoyproxy.envoy.extensions.transport_sockets.tls.v3
                .UpstreamTlsContext.newBuilder().setCommonTlsContext(io.envoyproxy.envoy.extensions
                    .transport_sockets.tls.v3.CommonTlsContext.newBuilder().addTlsCertificates(
                        io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.TlsCertificate
                            .newBuilder().setPrivateKey(io.envoyproxy.envoy.config.core.v3
                                .DataSource.newBuilder().setInlineString("APP PRIVATE KEY"))))
                .build()))).build();
    Meridian m = track(Meridian.builder().tls(serverFiles.cert(), serverFiles.key(), caFile)
        .build());
    m.publisher().set("default", List.of(cluster("a")));
    assertThatThrownBy(() -> m.publisher().set("default", List.of(cluster("a"), leaky)))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("Cluster 'leaky' inlines key material at transport_socket"
            + ".typed_config.common_tls_context.tls_certificates[0].private_key.inline_string")
        .hasMessageContaining("SDS");
    assertThat(m.admin().configDumpJson()).contains("\"a\"").doesNotContain("leaky");
    // Without mTLS it is the application's choice, unless it says its own server is mTLS.
    Meridian plain = track(Meridian.builder().build());
    plain.publisher().set("default", List.of(leaky));
    Meridian own = track(Meridian.builder().keysOnlyInSecrets(true).build());
    assertThatThrownBy(() -> own.publisher().set("default", List.of(leaky)))
        .isInstanceOf(InvalidConfigException.class);
  }

  /**
   * Envoy rejects a whole response for one resource that breaks a rule of its API protos: a
   * publication that carries one is refused whole, naming every problem, and nothing changes;
   * {@code validation(RuleSet.OFF)} publishes it as before.
   */
  @Test
  void aPublicationThatBreaksOneOfEnvoysRulesIsRefusedWholeAndNothingChanges() throws Exception {
    Meridian m = started(Meridian.builder());
    m.publisher().set("default", List.of(cluster("a")));
    Cluster negative = cluster("b").toBuilder()
        .setConnectTimeout(com.google.protobuf.Duration.newBuilder().setSeconds(-1)).build();
    ClusterLoadAssignment badPort = endpoints("b", 99999);
    assertThatThrownBy(() -> m.publisher().set("default", List.of(cluster("a"), negative, badPort)))
        .isInstanceOf(InvalidConfigException.class)
        .satisfies(e -> assertThat(((InvalidConfigException) e).problems()).containsExactly(
            "group 'default': Cluster b: connect_timeout: -1s must be greater than 0s (duration.gt)",
            "group 'default': ClusterLoadAssignment b: endpoints[0].lb_endpoints[0].endpoint"
                + ".address.socket_address.port_value: 99999 must be at most 65535 (uint32.lte)"));
    assertThatThrownBy(() -> m.publisher().update("default", Change.upsert(negative)))
        .isInstanceOf(InvalidConfigException.class);
    assertThat(m.publisher().resources("default")).containsExactly(cluster("a"));
    assertThat(m.admin().configDumpJson()).doesNotContain("\"b\"");

    Meridian off = track(Meridian.builder().validation(RuleSet.OFF).build());
    off.publisher().set("default", List.of(negative));
    assertThat(off.publisher().resources("default")).containsExactly(negative);
  }

  @Test
  void adminDataIsAvailableAsValuesAndAsAMountableHandler() throws Exception {
    Meridian m = started(Meridian.builder().controlPlaneId("registry-7"));
    m.publisher().set("default", List.of(cluster("a")));
    RawXdsClient.Sotw client = sotw(m, node("n1", "c"));
    client.ack(client.subscribe(CLUSTER));
    await(() -> m.admin().clientsJson().contains("\"n1\""), "the client in /clients");
    assertThat(m.admin().configDumpJson()).contains("\"a\"");
    assertThat(m.admin().metricsText()).contains("meridian_");
    assertThat(m.admin().clientStatus(ClientStatusRequest.getDefaultInstance()).getConfig(0)
        .getNode().getId()).isEqualTo("n1");

    com.sun.net.httpserver.HttpServer http = com.sun.net.httpserver.HttpServer.create(
        new InetSocketAddress("127.0.0.1", 0), 0);
    http.createContext("/meridian", m.admin().httpHandler());
    http.start();
    track(() -> http.stop(0));
    HttpClient h = HttpClient.newHttpClient();
    String base = "http://127.0.0.1:" + http.getAddress().getPort();
    HttpResponse<String> clients = h.send(HttpRequest.newBuilder(URI.create(base
        + "/meridian/clients")).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(clients.statusCode()).isEqualTo(200);
    assertThat(clients.body()).contains("registry-7").contains("\"n1\"");
    assertThat(h.send(HttpRequest.newBuilder(URI.create(base + "/meridian/readyz")).build(),
        HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
    HttpResponse<String> version = h.send(HttpRequest.newBuilder(URI.create(base
        + "/meridian/version")).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(version.statusCode()).isEqualTo(200);
    assertThat(version.body()).contains("\"version\":").contains("\"commit\":");
    assertThat(h.send(HttpRequest.newBuilder(URI.create(base + "/meridian/nope")).build(),
        HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(404);
    // the mounted handler negotiates the format as the admin port does (issue 24)
    HttpResponse<String> om = h.send(HttpRequest.newBuilder(URI.create(base + "/meridian/metrics"))
        .header("Accept", "application/openmetrics-text").build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(om.headers().firstValue("Content-Type").orElseThrow())
        .startsWith("application/openmetrics-text");
    assertThat(om.body()).contains("meridian_resources{group=\"default\",type=\"CDS\"} 1.0")
        .endsWith("# EOF\n");

    InetSocketAddress own = m.admin().startHttp(new InetSocketAddress("127.0.0.1", 0));
    assertThat(h.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + own.getPort()
        + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body()).contains("meridian_");
  }

  /** The admin port an application starts answers loopback and the hosts it names, no other. */
  @Test
  void theAdminPortAnApplicationStartsAnswersTheHostsItAllowsAndNoOther() throws Exception {
    Meridian m = started(Meridian.builder().adminAllowedHost("meridian.app.example"));
    m.publisher().set("default", List.of(cluster("a")));
    int port = m.admin().startHttp(new InetSocketAddress("127.0.0.1", 0)).getPort();
    for (String host : List.of("localhost:" + port, "meridian.app.example:8080")) {
      assertThat(dev.meridian.testing.RawHttp.request(port, "GET", "/config_dump",
          "Host: " + host).status()).as(host).isEqualTo(200);
    }
    assertThat(dev.meridian.testing.RawHttp.request(port, "GET", "/config_dump",
        "Host: attacker.example:" + port).status()).isEqualTo(421);
    assertThatThrownBy(() -> Meridian.builder().adminAllowedHost("app.example:8080"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("without a port");
  }

  // Issue 24: an application that scrapes its own Prometheus registry sees Meridian's metrics.
  @Test
  void anApplicationsOwnRegistryReceivesMeridiansMetricsAndOneRegistryTakesOneMeridian()
      throws Exception {
    io.prometheus.metrics.model.registry.PrometheusRegistry app =
        new io.prometheus.metrics.model.registry.PrometheusRegistry();
    io.prometheus.metrics.core.metrics.Counter.builder().name("app_orders_total")
        .help("The application's own.").register(app);
    Meridian m = started(Meridian.builder().metricsRegistry(app));
    m.publisher().set("default", List.of(cluster("a")));
    RawXdsClient.Sotw client = sotw(m, node("n1", "c"));
    client.ack(client.subscribe(CLUSTER));
    await(() -> appText(app).contains("meridian_acks_total{type=\"CDS\"} 1.0"),
        "the ACK counted in the application's registry");
    String text = appText(app);
    assertThat(text).contains("app_orders_total 0.0")
        .contains("meridian_resources{group=\"default\",type=\"CDS\"} 1.0")
        .contains("meridian_streams_connected{service=\"ads\",variant=\"sotw\"} 1.0")
        // JVM metrics are the application's to register, not Meridian's
        .doesNotContain("jvm_memory_used_bytes");
    // Meridian's own /metrics shows the same counters, with the JVM's
    assertThat(m.admin().metricsText()).contains("meridian_acks_total{type=\"CDS\"} 1.0")
        .contains("jvm_memory_used_bytes").doesNotContain("app_orders_total");

    // A second Meridian into the same registry: its names are taken, it says so at build()
    assertThatThrownBy(() -> Meridian.builder().metricsRegistry(app).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("meridian_")
        .hasMessageContaining("registry of its own");
    assertThat(appText(app)).contains("meridian_acks_total{type=\"CDS\"} 1.0");

    // Closed, Meridian leaves the registry: another may register there
    m.close();
    assertThat(appText(app)).doesNotContain("meridian_").contains("app_orders_total");
    Meridian next = track(Meridian.builder().metricsRegistry(app).build());
    assertThat(appText(app)).contains("meridian_requests_total{type=\"CDS\"} 0.0");
    next.close();
  }

  private static String appText(io.prometheus.metrics.model.registry.PrometheusRegistry r) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    try {
      io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter.create()
          .write(out, r.scrape());
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return out.toString(java.nio.charset.StandardCharsets.UTF_8);
  }

  @Test
  void twoMeridiansInOneJvmHaveTheirOwnMetrics() throws Exception {
    Meridian one = track(Meridian.builder().build());
    Meridian two = track(Meridian.builder().build());
    one.publisher().set("default", List.of(cluster("a"), cluster("b")));
    two.publisher().set("default", List.of(cluster("c")));
    assertThat(one.admin().metricsText())
        .contains("meridian_resources{group=\"default\",type=\"CDS\"} 2.0");
    assertThat(two.admin().metricsText())
        .contains("meridian_resources{group=\"default\",type=\"CDS\"} 1.0");
  }

  // Issue 22: no static mutable state; two Meridians in one JVM are independent.
  @Test
  void twoMeridiansInOneJvmShareNothing() throws Exception {
    Meridian one = started(Meridian.builder().controlPlaneId("one"));
    Meridian two = started(Meridian.builder().controlPlaneId("two"));
    // The same names with different content, published the same way.
    one.publisher().set("default", List.of(endpoints("svc", 1001)));
    two.publisher().set("default", List.of(endpoints("svc", 2002)));
    RawXdsClient.Sotw a = sotw(one, node("n", "c"));
    RawXdsClient.Sotw b = sotw(two, node("n", "c"));
    DiscoveryResponse ra = a.subscribe(ENDPOINT, "svc");
    DiscoveryResponse rb = b.subscribe(ENDPOINT, "svc");
    assertThat(port(ra)).isEqualTo(1001);
    assertThat(port(rb)).isEqualTo(2002);
    assertThat(ra.getControlPlane().getIdentifier()).isEqualTo("one");
    assertThat(rb.getControlPlane().getIdentifier()).isEqualTo("two");
    a.ack(ra, "svc");
    b.ack(rb, "svc");

    one.publisher().update("default", Change.upsert(endpoints("svc", 1003)));
    assertThat(port(a.take(ENDPOINT))).isEqualTo(1003);
    b.expectNoResponse();
    await(() -> one.admin().clientsJson().contains("\"n\"")
        && two.admin().clientsJson().contains("\"n\""), "both clients listed");

    one.close();
    assertThat(a.awaitClose().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    two.publisher().update("default", Change.upsert(endpoints("svc", 2004)));
    assertThat(port(b.take(ENDPOINT))).isEqualTo(2004);
    assertThat(two.isReady()).isTrue();
  }

  static int port(DiscoveryResponse r) throws Exception {
    return r.getResources(0).unpack(ClusterLoadAssignment.class).getEndpoints(0)
        .getLbEndpoints(0).getEndpoint().getAddress().getSocketAddress().getPortValue();
  }

  // Spec "TTL": an upsert with a TTL is sent wrapped in a Resource with that TTL.
  @Test
  void anUpsertWithATtlIsServedWithIt() throws Exception {
    Meridian m = started(Meridian.builder());
    m.publisher().update("default", Change.builder()
        .upsert(cluster("short-lived"), Duration.ofSeconds(30)).build());
    RawXdsClient.Delta client = track(RawXdsClient.deltaAds(channel(m.port()), Node.newBuilder()
        .setId("n1").addClientFeatures("xds.config.supports-resource-ttl").build()));
    DeltaDiscoveryResponse r = client.subscribe(CLUSTER, "short-lived");
    assertThat(r.getResources(0).getTtl().getSeconds()).isEqualTo(30);
    assertThatThrownBy(() -> Change.builder().upsert(cluster("x"), Duration.ZERO))
        .hasMessageContaining("positive");
  }
}
