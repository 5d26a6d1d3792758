package dev.meridian.internal.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.testing.ConfigFiles;
import dev.meridian.testing.RawXdsClient;
import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Envoy's LEDS over gRPC (issue 26): a config file's ClusterLoadAssignment with a
 * {@code leds_cluster_locality_config} locality and its LbEndpoints (docs/config.md "LEDS"),
 * served on Delta ADS and on {@code envoy.service.endpoint.v3.LocalityEndpointDiscoveryService/
 * DeltaLocalityEndpoints}, following the file; SotW refused (leds.proto: "State-of-the-World
 * (DiscoveryRequest) and REST are not supported").
 */
class LedsServeTest {
  private static final String EP = "xdstp://mesh.example/envoy.config.endpoint.v3.LbEndpoint/";
  private static final String ZONE_A = EP + "backend/zone-a/*";

  @TempDir Path dir;
  private MeridianServer server;
  private ManagedChannel channel;
  private Path config;

  private void start(String yaml) throws Exception {
    config = dir.resolve("c.yaml");
    Files.writeString(config, yaml);
    server = new MeridianServer(new MeridianServer.Options(config, "127.0.0.1", 0, 0, 200)
        .withRestPort(0).withPublish(dir.resolve("published"), FilePublisher.Format.YAML)).start();
    channel = NettyChannelBuilder.forAddress("127.0.0.1", server.xdsPort()).usePlaintext().build();
  }

  @AfterEach
  void stop() throws Exception {
    if (channel != null) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (server != null) {
      server.close();
    }
  }

  /** The CLA 'backend' with one LEDS locality, zone-a, and the LbEndpoints {@code ids} in it. */
  static String config(String... ids) {
    java.util.Map<String, Integer> endpoints = new java.util.LinkedHashMap<>();
    for (String id : ids) {
      endpoints.put(EP + id, 8080 + List.of("one", "two", "three", "four")
          .indexOf(id.substring(id.lastIndexOf('/') + 1)));
    }
    return ConfigFiles.leds("backend", ZONE_A, endpoints);
  }

  @Test
  void deltaAdsClientGetsTheLedsClaThenItsLbEndpointsWhichFollowTheConfigFile() throws Exception {
    start(config("backend/zone-a/one", "backend/zone-a/two", "backend/zone-b/three"));
    RawXdsClient.Delta c = RawXdsClient.deltaAds(channel, "envoy-1");
    DeltaDiscoveryResponse cla = c.subscribe(ResourceType.ENDPOINT, "backend");
    assertThat(cla.getResources(0).getResource().unpack(ClusterLoadAssignment.class)
        .getEndpoints(0).getLedsClusterLocalityConfig().getLedsCollectionName()).isEqualTo(ZONE_A);
    c.ack(cla);
    DeltaDiscoveryResponse eps = c.subscribe(ResourceType.LB_ENDPOINT, ZONE_A);
    assertThat(eps.getTypeUrl()).isEqualTo(ResourceType.LB_ENDPOINT.typeUrl());
    assertThat(eps.getResourcesList()).extracting(Resource::getName)
        .containsExactly(EP + "backend/zone-a/one", EP + "backend/zone-a/two");
    assertThat(eps.getResources(1).getResource().unpack(LbEndpoint.class).getEndpoint()
        .getAddress().getSocketAddress().getPortValue()).isEqualTo(8081);
    assertThat(eps.getResourceErrorsList()).isEmpty();
    c.ack(eps);

    ConfigFiles.replaceByRename(config, config("backend/zone-a/two", "backend/zone-a/four"));
    DeltaDiscoveryResponse next = c.take(ResourceType.LB_ENDPOINT);
    assertThat(next.getResourcesList()).extracting(Resource::getName)
        .containsExactly(EP + "backend/zone-a/four");
    assertThat(next.getRemovedResourcesList()).containsExactly(EP + "backend/zone-a/one");
  }

  @Test
  void perTypeDeltaLocalityEndpointsServesTheGlob() throws Exception {
    start(config("backend/zone-a/one"));
    RawXdsClient.Delta c = RawXdsClient.deltaPerType(channel, ResourceType.LB_ENDPOINT, "envoy-1");
    assertThat(c.subscribe(ResourceType.LB_ENDPOINT, ZONE_A).getResourcesList())
        .extracting(Resource::getName).containsExactly(EP + "backend/zone-a/one");
  }

  @Test
  void sotwAdsRequestForLbEndpointsEndsTheStreamAndRestAndFilesDoNotCarryThem() throws Exception {
    start(config("backend/zone-a/one"));
    RawXdsClient.Sotw c = RawXdsClient.sotwAds(channel, "envoy-1");
    c.send(ResourceType.LB_ENDPOINT, "", "", ZONE_A);
    Status closed = c.awaitClose();
    assertThat(closed.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(closed.getDescription()).contains("only over Incremental xDS",
        "DeltaLocalityEndpoints");
    // REST-JSON: as for virtual hosts, no path serves the type.
    HttpResponse<String> rest = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + server.restPort() + "/v3/discovery:lb-endpoints"))
        .POST(HttpRequest.BodyPublishers.ofString("{\"node\": {\"id\": \"n\"}}")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(rest.statusCode()).isEqualTo(404);
    // Published files are read as SotW (Envoy's filesystem subscriptions): none for LEDS.
    assertThat(dir.resolve("published/default/endpoints.yaml")).exists();
    assertThat(dir.resolve("published/default/lb-endpoints.yaml")).doesNotExist();
  }
}
