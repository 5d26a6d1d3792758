package dev.meridian.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.internal.server.MeridianServer;
import dev.meridian.testing.ConfigFiles;
import io.envoyproxy.envoy.config.core.v3.Node;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** LDS -> RDS -> CDS -> EDS against Meridian's server with the quickstart config. */
class XdsResolverTest {
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
    client = XdsClient.create(Bootstrap.forServer("127.0.0.1:" + server.xdsPort(),
        Node.newBuilder().setId("resolver").build()), XdsClient.Options.defaults());
  }

  @AfterEach
  void stop() {
    client.close();
    server.close();
  }

  @Test
  void resolvesTheQuickstartListenerToWeightedClustersAndEndpoints() throws Exception {
    try (XdsResolver r = new XdsResolver(client, "http").start(null)) {
      Await.until("a complete routing table", () -> r.current()
          .resolve("http", "/helloworld.Greeter/SayHello", Map.of(), () -> 0.99).ok()
          && r.current().resolve("http", "/x.Y/Z", Map.of(), () -> 0.1).ok());
      RoutingTable t = r.current();
      RoutingTable.Resolution v2 = t.resolve("http", "/helloworld.Greeter/SayHello", Map.of(), () -> 0.99);
      assertThat(v2.virtualHost().getName()).isEqualTo("greeter");
      assertThat(v2.clusters()).extracting(RoutingTable.WeightedChoice::name)
          .containsExactly("greeter-v1", "greeter-v2");
      assertThat(v2.cluster()).isEqualTo("greeter-v2");
      RoutingTable.Resolution v1 = t.resolve("http", "/helloworld.Greeter/SayHello", Map.of(), () -> 0.1);
      assertThat(v1.cluster()).isEqualTo("greeter-v1");
      assertThat(v1.endpoint().getPortValue()).isIn(50051, 50052);

      // The table is swapped on change: drop the 20% split.
      String yaml = Files.readString(config).replace("- { name: greeter-v2, weight: 20 }", "");
      ConfigFiles.replaceByRename(config, yaml);
      Await.until("the new split", () -> r.current().resolve("http", "/a.B/C", Map.of(), () -> 0.99)
          .clusters().size() == 1);
      assertThat(t.resolve("http", "/a.B/C", Map.of(), () -> 0.99).clusters()).hasSize(2); // immutable
    }
  }

  @Test
  void missingListenerIsReported() {
    try (XdsResolver r = new XdsResolver(client, "nope").start(null)) {
      assertThat(r.current().resolve("nope", "/a.B/C", Map.of(), () -> 0).problem())
          .contains("not yet received");
    }
  }
}
