package dev.meridian.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.xds.ResourceType;
import dev.meridian.internal.server.MeridianServer;
import dev.meridian.testing.ConfigFiles;
import io.envoyproxy.envoy.config.core.v3.Node;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The client against Meridian's own server, in all four variants. */
class MeridianServerInteropTest {
  @TempDir
  Path dir;
  private Path config;
  private MeridianServer server;
  private XdsClient client;

  @BeforeEach
  void start() throws Exception {
    config = dir.resolve("config.yaml");
    Files.copy(Path.of("..", "examples", "quickstart.yaml"), config);
    server = new MeridianServer(new MeridianServer.Options(config, "127.0.0.1", 0, 0, 100)).start();
  }

  @AfterEach
  void stop() {
    if (client != null) {
      client.close();
    }
    server.close();
  }


  @ParameterizedTest
  @EnumSource(ClientVariant.class)
  void followsTheQuickstartAndItsHotReload(ClientVariant v) throws Exception {
    client = XdsClient.create(Bootstrap.forServer("127.0.0.1:" + server.xdsPort(),
        Node.newBuilder().setId("it").build()),
        XdsClient.Options.defaults().withMode(v.mode).withProtocol(v.protocol));
    RecordingWatcher clusters = new RecordingWatcher();
    RecordingWatcher routes = new RecordingWatcher();
    client.watchAll(ResourceType.CLUSTER, clusters);
    client.watch(ResourceType.ROUTE, "local_routes", routes);
    Await.until("two clusters", () -> clusters.latest.size() == 2);
    Await.until("the route configuration", () -> routes.latest.containsKey("local_routes"));

    // Remove greeter-v2 from the config: a SotW CDS response without it, or Delta's
    // removed_resources, means it was deleted.
    String yaml = Files.readString(config);
    int start = yaml.indexOf("  - \"@type\": type.googleapis.com/envoy.config.cluster.v3.Cluster\n    name: greeter-v2");
    int end = yaml.indexOf("  - \"@type\"", start + 10);
    ConfigFiles.replaceByRename(config, yaml.substring(0, start) + yaml.substring(end));
    Await.until("greeter-v2 deleted", () -> !clusters.latest.containsKey("greeter-v2"));
    assertThat(clusters.latest).containsOnlyKeys("greeter-v1");
  }
}
