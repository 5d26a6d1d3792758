package dev.meridian.client;

import static dev.meridian.client.TestResources.edsCluster;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Status;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** gRFC A47: xdstp names go to their authority's server; other names to the top-level one. */
class FederationTest {
  static final String BOOTSTRAP = """
      {
        "xds_servers": [{"server_uri": "main:1", "channel_creds": [{"type": "insecure"}]}],
        "authorities": {
          "other.example": {
            "xds_servers": [{"server_uri": "other:1", "channel_creds": [{"type": "insecure"}]}]
          },
          "same.example": {}
        }
      }
      """;
  static final String OTHER = "xdstp://other.example/envoy.config.cluster.v3.Cluster/c1";

  private final Map<String, FakeTransport> byServer = new HashMap<>();
  private final FakeScheduler clock = new FakeScheduler();

  private XdsClient client() throws Exception {
    return new XdsClient(Bootstrap.fromJson(BOOTSTRAP),
        XdsClient.Options.defaults().withCallbackExecutor(Runnable::run).withScheduler(clock),
        server -> byServer.computeIfAbsent(server.serverUri(), u -> new FakeTransport()));
  }

  private static DiscoveryResponse response(String version, String name) {
    Cluster c = edsCluster("ignored").toBuilder().setName(name).build();
    return DiscoveryResponse.newBuilder().setTypeUrl(ResourceType.CLUSTER.typeUrl())
        .setVersionInfo(version).setNonce(version).addResources(Any.pack(c)).build();
  }

  @Test
  void xdstpNamesGoToTheirAuthoritysServer() throws Exception {
    try (XdsClient c = client()) {
      RecordingWatcher w = new RecordingWatcher();
      c.watch(ResourceType.CLUSTER, "plain", w);
      c.watch(ResourceType.CLUSTER, OTHER, w);
      c.watch(ResourceType.CLUSTER, "xdstp://same.example/envoy.config.cluster.v3.Cluster/c2", w);
      FakeTransport main = byServer.get("main:1");
      FakeTransport other = byServer.get("other:1");
      assertThat(main.lastSotw().requests.getLast().getResourceNamesList()).containsExactly("plain",
          "xdstp://same.example/envoy.config.cluster.v3.Cluster/c2");
      assertThat(other.lastSotw().next().getResourceNamesList()).containsExactly(OTHER);

      other.lastSotw().respond(response("o1", OTHER));
      assertThat(w.latest).containsOnlyKeys(OTHER);
      // The main server's CDS state of the world does not delete the other server's cluster.
      main.lastSotw().respond(response("m1", "plain"));
      assertThat(w.latest).containsOnlyKeys(OTHER, "plain");
      assertThat(other.lastSotw().requests.getLast().getVersionInfo()).isEqualTo("o1");
      assertThat(main.lastSotw().requests.getLast().getVersionInfo()).isEqualTo("m1");

      // One server failing does not disturb the other's watchers.
      w.take();
      other.lastSotw().fail(Status.UNAVAILABLE);
      assertThat(w.errors).singleElement().satisfies(e -> assertThat(e.message()).contains("other:1"));
    }
  }

  @Test
  void wildcardWatchesSeeOnlyTheTopLevelServer() throws Exception {
    try (XdsClient c = client()) {
      RecordingWatcher all = new RecordingWatcher();
      c.watch(ResourceType.CLUSTER, OTHER, new RecordingWatcher());
      c.watchAll(ResourceType.CLUSTER, all);
      byServer.get("other:1").lastSotw().respond(response("o1", OTHER));
      byServer.get("main:1").lastSotw().respond(response("m1", "plain"));
      assertThat(all.latest).containsOnlyKeys("plain");
    }
  }

  @Test
  void unknownAuthorityIsAnErrorForItsWatcher() throws Exception {
    try (XdsClient c = client()) {
      RecordingWatcher w = new RecordingWatcher();
      c.watch(ResourceType.CLUSTER, "xdstp://nobody.example/envoy.config.cluster.v3.Cluster/x", w);
      assertThat(w.take()).containsExactly(
          "error:INVALID_RESOURCE:xdstp://nobody.example/envoy.config.cluster.v3.Cluster/x");
      assertThat(byServer).isEmpty();
    }
  }
}
