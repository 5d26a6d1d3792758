package dev.meridian.internal.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.xds.ResourceType;
import dev.meridian.testing.ConfigFiles;
import dev.meridian.testing.RawXdsClient;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
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

/** Incremental xDS through the serve path over loopback gRPC, Delta ADS and per-type. */
class DeltaServeTest {
  enum Variant { DELTA_ADS, DELTA_PER_TYPE }

  @TempDir Path dir;
  Path config;
  MeridianServer server;
  final List<ManagedChannel> channels = new ArrayList<>();

  void start(String yaml, int port) throws Exception {
    config = dir.resolve("config.yaml");
    Files.writeString(config, yaml);
    server = new MeridianServer(new MeridianServer.Options(config, "127.0.0.1", port, 0, 200)).start();
  }

  void rewrite(String yaml) throws Exception {
    ConfigFiles.replaceByRename(config, yaml);
  }

  RawXdsClient.Delta client(Variant v, ResourceType type) {
    ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", server.xdsPort()).usePlaintext().build();
    channels.add(ch);
    return v == Variant.DELTA_ADS ? RawXdsClient.deltaAds(ch, "delta-node")
        : RawXdsClient.deltaPerType(ch, type, "delta-node");
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

  static List<String> names(DeltaDiscoveryResponse r) {
    return r.getResourcesList().stream().map(Resource::getName).toList();
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void editSendsOnlyTheChangedClusterAndDeletionAsRemoval(Variant v) throws Exception {
    start("resources:\n" + ServeTest.cluster("a", 1) + ServeTest.cluster("b", 1), 0);
    RawXdsClient.Delta c = client(v, ResourceType.CLUSTER);
    c.send(ResourceType.CLUSTER, DeltaDiscoveryRequest.newBuilder().addResourceNamesSubscribe("*"));
    DeltaDiscoveryResponse first = c.take();
    assertThat(names(first)).containsExactly("a", "b");
    c.ack(first);
    rewrite("resources:\n" + ServeTest.cluster("a", 2));
    DeltaDiscoveryResponse next = c.take();
    assertThat(names(next)).containsExactly("a");
    if (v == Variant.DELTA_ADS) {
      // Make-before-break on ADS: the removal comes in its own, later response.
      assertThat(next.getRemovedResourcesList()).isEmpty();
      c.ack(next);
      next = c.take();
      assertThat(next.getResourcesList()).isEmpty();
    }
    assertThat(next.getRemovedResourcesList()).containsExactly("b");
  }

  @Test
  void restartedServerSendsNothingToAClientHoldingTheCurrentResources() throws Exception {
    String yaml = "resources:\n" + ServeTest.cluster("a", 1) + ServeTest.endpoints("a", 1000);
    start(yaml, 0);
    RawXdsClient.Delta c = client(Variant.DELTA_ADS, ResourceType.CLUSTER);
    c.send(ResourceType.CLUSTER, DeltaDiscoveryRequest.newBuilder().addResourceNamesSubscribe("*"));
    DeltaDiscoveryResponse cds = c.take();
    c.ack(cds);
    int port = server.xdsPort();
    server.close();
    c.awaitClose();
    start(yaml, port);
    RawXdsClient.Delta again = client(Variant.DELTA_ADS, ResourceType.CLUSTER);
    DeltaDiscoveryRequest.Builder resume = DeltaDiscoveryRequest.newBuilder().addResourceNamesSubscribe("*");
    for (Resource r : cds.getResourcesList()) {
      resume.putInitialResourceVersions(r.getName(), r.getVersion());
    }
    again.send(ResourceType.CLUSTER, resume);
    again.send(ResourceType.ENDPOINT, DeltaDiscoveryRequest.newBuilder().addResourceNamesSubscribe("a"));
    // The ADS stream is ordered: the EDS answer comes first, so no CDS resend happened.
    assertThat(again.take().getTypeUrl()).isEqualTo(ResourceType.ENDPOINT.typeUrl());
  }

  @Test
  void virtualHostsAreServedByAliasOnDeltaVirtualHosts() throws Exception {
    start("""
        resources:
          - "@type": type.googleapis.com/envoy.config.route.v3.VirtualHost
            name: local_routes/shop
            domains: [shop.example.com]
            routes: [ { match: { prefix: "/" }, route: { cluster: shop } } ]
        """, 0);
    RawXdsClient.Delta c = client(Variant.DELTA_PER_TYPE, ResourceType.VIRTUAL_HOST);
    c.send(ResourceType.VIRTUAL_HOST, DeltaDiscoveryRequest.newBuilder()
        .addResourceNamesSubscribe("local_routes/shop.example.com"));
    Resource r = c.take().getResources(0);
    assertThat(r.getName()).isEqualTo("local_routes/shop");
    assertThat(r.getAliasesList()).containsExactly("local_routes/shop.example.com");
  }
}
