package dev.meridian.internal.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.meridian.internal.config.ConfigException;
import dev.meridian.xds.ResourceType;
import dev.meridian.testing.ConfigFiles;
import dev.meridian.testing.RawXdsClient;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The standalone server as users run it: a config file on disk, real loopback gRPC, hot reload.
 * Scenarios run across ADS and the per-type services.
 */
class ServeTest {
  enum Variant { ADS, PER_TYPE }

  @TempDir Path dir;
  Path config;
  MeridianServer server;
  final List<ManagedChannel> channels = new ArrayList<>();

  static String cluster(String name, int timeoutSeconds) {
    return "  - { \"@type\": type.googleapis.com/envoy.config.cluster.v3.Cluster, name: " + name
        + ", type: EDS, connect_timeout: " + timeoutSeconds + "s,"
        + " eds_cluster_config: { eds_config: { ads: {}, resource_api_version: V3 } } }\n";
  }

  static String endpoints(String cluster, int port) {
    return "  - \"@type\": type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment\n"
        + "    cluster_name: " + cluster + "\n"
        + "    endpoints: [ { lb_endpoints: [ { endpoint: { address: { socket_address: "
        + "{ address: 127.0.0.1, port_value: " + port + " } } } } ] } ]\n";
  }

  MeridianServer start(String yaml) throws Exception {
    config = dir.resolve("config.yaml");
    Files.writeString(config, yaml);
    server = new MeridianServer(new MeridianServer.Options(config, "127.0.0.1", 0, 0, 200)).start();
    return server;
  }

  /** Replaces the file the way editors do (write a temp file, rename over). */
  void rewrite(String yaml) throws Exception {
    ConfigFiles.replaceByRename(config, yaml);
  }

  RawXdsClient.Sotw client(Variant v, ResourceType type, String nodeId) {
    ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", server.xdsPort()).usePlaintext().build();
    channels.add(ch);
    return v == Variant.ADS ? RawXdsClient.sotwAds(ch, nodeId)
        : RawXdsClient.sotwPerType(ch, type, nodeId);
  }

  @AfterEach
  void cleanUp() throws Exception {
    for (ManagedChannel ch : channels) {
      ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (server != null) {
      server.close();
    }
  }

  static List<String> names(DiscoveryResponse r) throws Exception {
    List<String> names = new ArrayList<>();
    for (var a : r.getResourcesList()) {
      if (a.is(Cluster.class)) {
        names.add(a.unpack(Cluster.class).getName());
      } else if (a.is(ClusterLoadAssignment.class)) {
        names.add(a.unpack(ClusterLoadAssignment.class).getClusterName());
      }
    }
    return names;
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void editedFileIsServedAndAcksSendNothing(Variant v) throws Exception {
    start("resources:\n" + cluster("a", 1) + cluster("b", 1));
    RawXdsClient.Sotw c = client(v, ResourceType.CLUSTER, "n1");
    c.send(ResourceType.CLUSTER, "", "");
    DiscoveryResponse first = c.take();
    assertThat(names(first)).containsExactly("a", "b");
    c.ack(first);
    rewrite("resources:\n" + cluster("a", 1) + cluster("b", 2) + cluster("c", 1));
    DiscoveryResponse second = c.take();
    assertThat(names(second)).containsExactly("a", "b", "c");
    assertThat(second.getVersionInfo()).isNotEqualTo(first.getVersionInfo());
    assertThat(second.getNonce()).isNotEqualTo(first.getNonce());
  }

  /**
   * Envoy rejects a whole response for one resource that breaks a rule of its API protos (xDS
   * spec, "ACK/NACK"): a reload that carries one is refused before any client sees it, and the
   * last good config keeps being served; the next good edit is the very next response.
   */
  @ParameterizedTest
  @EnumSource(Variant.class)
  void aReloadThatBreaksOneOfEnvoysRulesIsRefusedAndTheLastGoodConfigServed(Variant v)
      throws Exception {
    start("resources:\n" + endpoints("a", 1000));
    RawXdsClient.Sotw c = client(v, ResourceType.ENDPOINT, "n1");
    c.send(ResourceType.ENDPOINT, "", "", "a");
    c.ack(c.take(), "a");
    rewrite("resources:\n" + endpoints("a", 99999)); // a port Envoy refuses (uint32.lte)
    OpsFixture.await("the rejected reload", () -> hubRejection() != null);
    assertThat(hubRejection()).contains("port_value: 99999").contains("(uint32.lte)");
    rewrite("resources:\n" + endpoints("a", 2000));
    DiscoveryResponse next = c.take();
    assertThat(next.getResources(0).unpack(ClusterLoadAssignment.class).getEndpoints(0)
        .getLbEndpoints(0).getEndpoint().getAddress().getSocketAddress().getPortValue())
        .isEqualTo(2000);
  }

  /** {@code --validation off}: served as written, as before the rules were checked; warned. */
  @Test
  void withValidationOffWhatEnvoyWouldRefuseIsServed() throws Exception {
    config = dir.resolve("config.yaml");
    Files.writeString(config, "resources:\n" + endpoints("a", 99999));
    List<String> warned = new java.util.concurrent.CopyOnWriteArrayList<>();
    java.util.logging.Handler h = new java.util.logging.Handler() {
      @Override public void publish(java.util.logging.LogRecord r) {
        if (r.getLevel() == java.util.logging.Level.WARNING) {
          warned.add(r.getMessage());
        }
      }

      @Override public void flush() {}

      @Override public void close() {}
    };
    java.util.logging.Logger logger = java.util.logging.Logger.getLogger("dev.meridian.server");
    logger.addHandler(h);
    try {
      server = new MeridianServer(new MeridianServer.Options(config, "127.0.0.1", 0, 0, 200)
          .withRuleCheck(dev.meridian.internal.config.RuleCheck.OFF)).start();
    } finally {
      logger.removeHandler(h);
    }
    assertThat(warned).anySatisfy(w -> assertThat(w).startsWith("validation_off ")
        .contains("fix=\"--validation envoy (the default)\""));
    RawXdsClient.Sotw c = client(Variant.ADS, ResourceType.ENDPOINT, "n1");
    c.send(ResourceType.ENDPOINT, "", "", "a");
    assertThat(c.take().getResources(0).unpack(ClusterLoadAssignment.class).getEndpoints(0)
        .getLbEndpoints(0).getEndpoint().getAddress().getSocketAddress().getPortValue())
        .isEqualTo(99999);
  }

  @Test
  void aFirstConfigThatBreaksOneOfEnvoysRulesFailsToStart() throws Exception {
    Path bad = dir.resolve("bad.yaml");
    Files.writeString(bad, "resources:\n" + cluster("a", -1));
    MeridianServer s = new MeridianServer(new MeridianServer.Options(bad, "127.0.0.1", 0, 0, 200));
    assertThatThrownBy(s::start).isInstanceOf(ConfigException.class)
        .hasMessageContaining(bad + ":2:").hasMessageContaining("Cluster a: connect_timeout: -1s")
        .hasMessageContaining("(duration.gt)");
    s.close();
  }

  /** The last rejected reload's problems, as /status shows them; null if none. */
  String hubRejection() {
    var r = server.hub().reloads().lastFailure();
    return r == null ? null : String.join("\n", r.errors());
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void identicalRewriteAndRejectedFileSendNothing(Variant v) throws Exception {
    start("resources:\n" + endpoints("a", 1000));
    RawXdsClient.Sotw c = client(v, ResourceType.ENDPOINT, "n1");
    c.send(ResourceType.ENDPOINT, "", "", "a");
    c.ack(c.take(), "a");
    // Identical content (even rewritten with a new mtime), then a broken file: neither is sent.
    rewrite("resources:\n" + endpoints("a", 1000));
    rewrite("resources:\n  - { \"@type\": type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment, cluster_name: a, bogus: 1 }\n");
    // A valid change afterwards is the very next response the stream sees (streams are ordered).
    rewrite("resources:\n" + endpoints("a", 2000));
    DiscoveryResponse next = c.take();
    assertThat(next.getResources(0).unpack(ClusterLoadAssignment.class).getEndpoints(0)
        .getLbEndpoints(0).getEndpoint().getAddress().getSocketAddress().getPortValue()).isEqualTo(2000);
  }

  /**
   * A large SotW subscription (its names take the shared-names parse): the ACK repeating all of
   * them is no change, so the next push carries only the one changed endpoint set.
   */
  @ParameterizedTest
  @EnumSource(Variant.class)
  void largeSubscriptionAcksAreUnderstoodAndOnlyTheChangeIsPushed(Variant v) throws Exception {
    StringBuilder yaml = new StringBuilder("resources:\n");
    String[] names = new String[400];
    for (int i = 0; i < names.length; i++) {
      names[i] = "a-rather-long-cluster-name-" + i;
      yaml.append(endpoints(names[i], 1000));
    }
    start(yaml.toString());
    RawXdsClient.Sotw a = client(v, ResourceType.ENDPOINT, "n1");
    RawXdsClient.Sotw b = client(v, ResourceType.ENDPOINT, "n2");
    for (RawXdsClient.Sotw c : List.of(a, b)) {
      c.send(ResourceType.ENDPOINT, "", "", names);
      DiscoveryResponse first = c.take();
      assertThat(first.getResourcesCount()).isEqualTo(400);
      c.ack(first, names);
    }
    rewrite(yaml.toString().replace(endpoints(names[7], 1000), endpoints(names[7], 2000)));
    for (RawXdsClient.Sotw c : List.of(a, b)) {
      DiscoveryResponse next = c.take();
      assertThat(names(next)).containsExactly(names[7]);
      c.ack(next, names);
    }
  }

  @Test
  void reconnectAfterRestartWithTheLastVersionGetsNothing() throws Exception {
    String yaml = "resources:\n" + cluster("a", 1) + endpoints("a", 1000);
    start(yaml);
    RawXdsClient.Sotw c = client(Variant.ADS, ResourceType.CLUSTER, "n1");
    c.send(ResourceType.CLUSTER, "", "");
    DiscoveryResponse cds = c.take();
    c.ack(cds);
    int port = server.xdsPort();
    server.close();
    assertThat(c.awaitClose().getCode()).isIn(Status.Code.UNAVAILABLE, Status.Code.CANCELLED, Status.Code.OK);
    server = new MeridianServer(new MeridianServer.Options(config, "127.0.0.1", port, 0, 200)).start();
    RawXdsClient.Sotw again = client(Variant.ADS, ResourceType.CLUSTER, "n1");
    // Spec "Versioning and Node Identifier": the new stream starts at the last version, no nonce.
    again.send(ResourceType.CLUSTER, cds.getVersionInfo(), "");
    again.send(ResourceType.ENDPOINT, "", "", "a");
    // The first response on the ordered ADS stream is EDS: no CDS resend happened before it.
    DiscoveryResponse r = again.take();
    assertThat(r.getTypeUrl()).isEqualTo(ResourceType.ENDPOINT.typeUrl());
  }

  @Test
  void badRequestClosesOnlyItsOwnStream() throws Exception {
    start("resources:\n" + cluster("a", 1));
    RawXdsClient.Sotw good = client(Variant.ADS, ResourceType.CLUSTER, "good");
    good.send(ResourceType.CLUSTER, "", "");
    good.ack(good.take());
    RawXdsClient.Sotw bad = client(Variant.ADS, ResourceType.CLUSTER, "bad");
    bad.send(io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest.newBuilder()
        .setTypeUrl("type.googleapis.com/not.a.Type"));
    Status s = bad.awaitClose();
    assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(s.getDescription()).contains("unknown type_url");
    rewrite("resources:\n" + cluster("a", 2));
    assertThat(names(good.take())).containsExactly("a");
    assertThat(good.closed()).isNotDone();
  }

  @Test
  void perTypeServiceRejectsAnotherType() throws Exception {
    start("resources:\n" + cluster("a", 1));
    RawXdsClient.Sotw c = client(Variant.PER_TYPE, ResourceType.CLUSTER, "n");
    c.send(io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest.newBuilder()
        .setTypeUrl(ResourceType.LISTENER.typeUrl()));
    assertThat(c.awaitClose().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
  }

  @Test
  void nodeGroupsServeDifferentResources() throws Exception {
    start("resources:\n" + cluster("main", 1) + "groups:\n  - name: canary\n    match: { node_id: \"canary-*\" }\n"
        + "    resources:\n  " + cluster("canary", 1).replace("\n", "\n  ").stripTrailing() + "\n");
    RawXdsClient.Sotw main = client(Variant.ADS, ResourceType.CLUSTER, "prod-1");
    RawXdsClient.Sotw canary = client(Variant.ADS, ResourceType.CLUSTER, "canary-1");
    main.send(ResourceType.CLUSTER, "", "");
    canary.send(ResourceType.CLUSTER, "", "");
    assertThat(names(main.take())).containsExactly("main");
    assertThat(names(canary.take())).containsExactly("canary");
  }

  @Test
  void healthzIsOkOnceServing() throws Exception {
    start("resources:\n" + cluster("a", 1));
    HttpResponse<String> r = HttpClient.newHttpClient().send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/healthz")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
  }

  @Test
  void ttlResourcesAreWrappedAndHeartbeatedOverGrpc() throws Exception {
    config = dir.resolve("config.yaml");
    Files.writeString(config, "resources:\n"
        + "  - { \"@type\": type.googleapis.com/envoy.service.discovery.v3.Resource, ttl: 60s,\n"
        + "      resource: { \"@type\": type.googleapis.com/envoy.config.cluster.v3.Cluster, name: temp } }\n");
    server = new MeridianServer(new MeridianServer.Options(config, "127.0.0.1", 0, 0, 200)
        .withHeartbeatInterval(java.time.Duration.ofMillis(300))).start();
    ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", server.xdsPort()).usePlaintext().build();
    channels.add(ch);
    RawXdsClient.Sotw c = RawXdsClient.sotwAds(ch, "ttl-node");
    c.send(io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest.newBuilder()
        .setTypeUrl(ResourceType.CLUSTER.typeUrl())
        .setNode(io.envoyproxy.envoy.config.core.v3.Node.newBuilder().setId("ttl-node")
            .addClientFeatures("xds.config.supports-resource-ttl")
            .addClientFeatures("xds.config.resource-in-sotw")));
    DiscoveryResponse first = c.take();
    var wrapped = first.getResources(0).unpack(io.envoyproxy.envoy.service.discovery.v3.Resource.class);
    assertThat(wrapped.getTtl().getSeconds()).isEqualTo(60);
    assertThat(wrapped.hasResource()).isTrue();
    c.ack(first);
    // --heartbeat-interval 300ms: a body-less heartbeat at the same version follows.
    DiscoveryResponse hb = c.take();
    var beat = hb.getResources(0).unpack(io.envoyproxy.envoy.service.discovery.v3.Resource.class);
    assertThat(beat.hasResource()).isFalse();
    assertThat(beat.getVersion()).isEqualTo(wrapped.getVersion());
    assertThat(hb.getVersionInfo()).isEqualTo(first.getVersionInfo());
  }

  @Test
  void referenceCheckRejectRefusesADanglingConfigAtStart() throws Exception {
    Path p = dir.resolve("dangling.yaml");
    Files.writeString(p, "resources:\n" + cluster("a", 1));
    MeridianServer s = new MeridianServer(new MeridianServer.Options(p, "127.0.0.1", 0, 0, 200)
        .withReferenceCheck(dev.meridian.internal.config.ReferenceCheck.REJECT));
    assertThatThrownBy(s::start).isInstanceOf(ConfigException.class)
        .hasMessageContaining("EDS cluster 'a' has no endpoints");
    s.close();
  }

  @Test
  void invalidFirstConfigFailsToStart() throws Exception {
    Path bad = dir.resolve("bad.yaml");
    Files.writeString(bad, "resources:\n  - { name: x }\n");
    MeridianServer s = new MeridianServer(new MeridianServer.Options(bad, "127.0.0.1", 0, 0, 200));
    assertThatThrownBy(s::start).isInstanceOf(ConfigException.class).hasMessageContaining("missing '@type'");
    s.close();
  }
}
