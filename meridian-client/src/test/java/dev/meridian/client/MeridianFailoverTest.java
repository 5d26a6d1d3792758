package dev.meridian.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.xds.ResourceType;
import dev.meridian.internal.server.MeridianServer;
import dev.meridian.testing.ConfigFiles;
import io.envoyproxy.envoy.config.core.v3.Node;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Several {@code xds_servers} (gRFC A71 "xDS Fallback") against real Meridian replicas on
 * loopback: two servers with the same config (versions come from content, so they are equal on
 * both), the client in each of its four variants with the default {@link XdsClient.Fallback}
 * (replicas). Scripted edge cases are in {@link FallbackTest}.
 */
class MeridianFailoverTest {
  @TempDir
  Path dir;
  private MeridianServer primary;
  private MeridianServer secondary;
  private XdsClient client;
  private final Map<String, CountingTransport> transports = new ConcurrentHashMap<>();
  private final RecordingWatcher clusters = new RecordingWatcher();
  private final RecordingWatcher routes = new RecordingWatcher();
  private final RecordingWatcher endpoints = new RecordingWatcher();

  @AfterEach
  void stop() {
    if (client != null) {
      client.close();
    }
    for (MeridianServer s : new MeridianServer[] {primary, secondary}) {
      if (s != null) {
        s.close();
      }
    }
  }

  /** A replica serving {@code name}/config.yaml, a copy of the quickstart. */
  private MeridianServer replica(String name, int port) throws Exception {
    Path config = config(name);
    if (!Files.exists(config)) {
      Files.createDirectories(config.getParent());
      Files.copy(Path.of("..", "examples", "quickstart.yaml"), config);
    }
    return new MeridianServer(new MeridianServer.Options(config, "127.0.0.1", port, 0, 100))
        .start();
  }

  private Path config(String name) {
    return dir.resolve(name).resolve("config.yaml");
  }

  /** Deletes the cluster greeter-v2 from a replica's config, as an apply to its store would. */
  private void deleteGreeterV2(String name) throws Exception {
    String yaml = Files.readString(config(name));
    int start = yaml.indexOf("  - \"@type\": type.googleapis.com/envoy.config.cluster.v3.Cluster\n"
        + "    name: greeter-v2");
    int end = yaml.indexOf("  - \"@type\"", start + 10);
    ConfigFiles.replaceByRename(config(name), yaml.substring(0, start) + yaml.substring(end));
  }

  private static String uri(int port) {
    return "127.0.0.1:" + port;
  }

  private static int closedPort() throws Exception {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort(); // closed again: nothing listens there
    }
  }

  private void connect(ClientVariant v, int... ports) {
    List<Bootstrap.ServerInfo> servers = java.util.Arrays.stream(ports)
        .mapToObj(p -> new Bootstrap.ServerInfo(uri(p), Bootstrap.ChannelCreds.INSECURE, List.of()))
        .toList();
    Bootstrap b = new Bootstrap(servers, Node.newBuilder().setId("failover").build(), Map.of(),
        null);
    client = new XdsClient(b, XdsClient.Options.defaults().withProtocol(v.protocol)
        .withMode(v.mode), server -> transports.computeIfAbsent(server.serverUri(),
            u -> new CountingTransport(new GrpcXdsTransport(server))));
    client.watchAll(ResourceType.CLUSTER, clusters);
    client.watch(ResourceType.ROUTE, "local_routes", routes);
    client.watch(ResourceType.ENDPOINT, List.of("greeter-v1", "greeter-v2"), endpoints);
  }

  private void awaitTheQuickstart() {
    Await.until("two clusters", () -> clusters.latest.size() == 2);
    Await.until("the route configuration", () -> routes.latest.containsKey("local_routes"));
    Await.until("two endpoint sets", () -> endpoints.latest.size() == 2);
  }

  private CountingTransport sentBy(MeridianServer s) {
    return transports.get(uri(s.xdsPort()));
  }

  /** Every watcher event but "processed" ones (a response was handled): changes and errors. */
  private List<String> changes() {
    return java.util.stream.Stream.of(clusters, routes, endpoints)
        .flatMap(w -> w.take().stream()).filter(e -> !e.startsWith("processed:")).toList();
  }

  // gRFC A71 "Change XdsClient to support fallback within each xDS authority": the primary is
  // unreachable (A57: its stream ends before any response) and nothing is cached.
  @ParameterizedTest
  @EnumSource(ClientVariant.class)
  void primaryUnreachableAtStart_theClientGetsItsConfigFromTheSecondary(ClientVariant v)
      throws Exception {
    int down = closedPort();
    secondary = replica("b", 0);
    connect(v, down, secondary.xdsPort());
    awaitTheQuickstart();

    assertThat(client.serverInUse().serverUri()).isEqualTo(uri(secondary.xdsPort()));
    // A71: watchers hear of connectivity failures only once every server is unreachable.
    assertThat(changes()).noneMatch(e -> e.startsWith("error:"));
  }

  // Meridian's replicas (Fallback.WHEN_UNREACHABLE, gRFC A95's fallback_on_reachability_only):
  // the lost primary is left even though everything is cached; the secondary is told the versions
  // the client holds and, serving the same config, sends none of it again.
  @ParameterizedTest
  @EnumSource(ClientVariant.class)
  void primaryDiesWhileConnected_theClientMovesToTheSecondaryAndKeepsGettingUpdates(
      ClientVariant v) throws Exception {
    primary = replica("a", 0);
    secondary = replica("b", 0);
    connect(v, primary.xdsPort(), secondary.xdsPort());
    awaitTheQuickstart();
    assertThat(client.serverInUse().serverUri()).isEqualTo(uri(primary.xdsPort()));
    assertThat(sentBy(secondary)).isNull(); // no connection to a fallback while the primary serves
    changes();

    primary.close();
    Await.until("on the secondary",
        () -> client.serverInUse().serverUri().equals(uri(secondary.xdsPort())));
    deleteGreeterV2("b");
    Await.until("greeter-v2 deleted", () -> !clusters.latest.containsKey("greeter-v2"));

    // Only the change reached the watchers: nothing they held was reported again, no error.
    assertThat(changes()).containsExactly("dne:greeter-v2");
    // The secondary sent only what the change needs: SotW, the whole (one-cluster) CDS state;
    // Delta, a removal without resources.
    assertThat(sentBy(secondary).resources.get())
        .isEqualTo(v.protocol == XdsClient.Protocol.SOTW ? 1 : 0);
  }

  // gRFC A71: the client goes back to a server of higher priority and closes its streams to the
  // lower one; replicas are gone back to as soon as they are reachable.
  @ParameterizedTest
  @EnumSource(ClientVariant.class)
  void primaryComesBack_theClientReturnsToItAndClosesTheSecondary(ClientVariant v)
      throws Exception {
    primary = replica("a", 0);
    int primaryPort = primary.xdsPort();
    secondary = replica("b", 0);
    connect(v, primaryPort, secondary.xdsPort());
    awaitTheQuickstart();
    changes();
    primary.close();
    Await.until("on the secondary",
        () -> client.serverInUse().serverUri().equals(uri(secondary.xdsPort())));
    CountingTransport toPrimary = transports.get(uri(primaryPort));
    toPrimary.reset();

    primary = replica("a", primaryPort); // the same config, on the same port
    Await.until("back on the primary",
        () -> client.serverInUse().serverUri().equals(uri(primaryPort)));
    Await.until("no stream to the secondary", () -> sentBy(secondary).open.get() == 0);
    deleteGreeterV2("a"); // only on the primary: the client listens to it alone
    Await.until("greeter-v2 deleted", () -> !clusters.latest.containsKey("greeter-v2"));

    assertThat(changes()).containsExactly("dne:greeter-v2");
    assertThat(toPrimary.resources.get())
        .isEqualTo(v.protocol == XdsClient.Protocol.SOTW ? 1 : 0);
  }
}
