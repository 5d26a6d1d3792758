package dev.meridian.client;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.protobuf.TextFormat;
import com.google.protobuf.util.JsonFormat;
import com.sun.net.httpserver.HttpServer;
import dev.meridian.internal.protocol.EnvoyTypeRegistry;
import dev.meridian.xds.ResourceType;
import dev.meridian.internal.server.MeridianServer;
import dev.meridian.testing.ConfigFiles;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The REST-JSON and filesystem transports (spec "REST-JSON polling subscriptions", "Filesystem
 * subscriptions") under the client's one watcher API.
 */
class RestAndFileTransportTest {
  @TempDir Path dir;
  MeridianServer server;
  XdsClient client;
  HttpServer fake;

  @AfterEach
  void stop() {
    if (client != null) {
      client.close();
    }
    if (server != null) {
      server.close();
    }
    if (fake != null) {
      fake.stop(0);
    }
  }

  static String cluster(String name, int seconds) {
    return "  - { \"@type\": type.googleapis.com/envoy.config.cluster.v3.Cluster, name: " + name
        + ", connect_timeout: " + seconds + "s }\n";
  }

  XdsClient client(Node node, XdsTransport transport) {
    return new XdsClient(Bootstrap.forServer("127.0.0.1:1", node),
        XdsClient.Options.defaults().withMode(XdsClient.Mode.PER_TYPE), transport);
  }

  void replace(Path target, String content) throws Exception {
    ConfigFiles.replaceByRename(target, content);
  }

  @Test
  void restPollingFollowsMeridianAcrossEditsAndGroups() throws Exception {
    Path config = dir.resolve("config.yaml");
    String groups = "groups:\n  - name: canary\n    match: { node_id: \"canary-*\" }\n    resources:\n  "
        + cluster("c", 1).stripTrailing() + "\n";
    Files.writeString(config, "resources:\n" + cluster("a", 1) + cluster("b", 1) + groups);
    server = new MeridianServer(new MeridianServer.Options(config, "127.0.0.1", 0, 0, 100)
        .withRestPort(0)).start();
    URI http = URI.create("http://127.0.0.1:" + server.restPort());
    client = client(Node.newBuilder().setId("rest-1").build(),
        new RestXdsTransport(http, Duration.ofSeconds(10), Duration.ofMillis(50)));
    RecordingWatcher clusters = new RecordingWatcher();
    client.watchAll(ResourceType.CLUSTER, clusters);
    Await.until("a and b over REST", () -> clusters.latest.keySet().equals(java.util.Set.of("a", "b")));
    // A held poll (Prefer: wait) is answered when the file changes.
    replace(config, "resources:\n" + cluster("a", 1) + cluster("b", 9) + groups);
    Await.until("b updated", () -> clusters.latest.containsKey("b") && clusters.latest.get("b")
        .message().toString().contains("seconds: 9"));

    XdsClient canary = client(Node.newBuilder().setId("canary-1").build(),
        new RestXdsTransport(http, Duration.ofSeconds(10), Duration.ofMillis(50)));
    try {
      RecordingWatcher c = new RecordingWatcher();
      canary.watchAll(ResourceType.CLUSTER, c);
      Await.until("the canary group's cluster", () -> c.latest.containsKey("c"));
      assertThat(c.latest).containsOnlyKeys("c");
    } finally {
      canary.close();
    }
  }

  @Test
  void restRecoversFromAnUnreadableResponse() throws Exception {
    String good = JsonFormat.printer().usingTypeRegistry(EnvoyTypeRegistry.get().typeRegistry())
        .print(DiscoveryResponse.newBuilder().setVersionInfo("1")
            .setTypeUrl(ResourceType.CLUSTER.typeUrl())
            .addResources(Any.pack(Cluster.newBuilder().setName("x").build())).build());
    AtomicInteger calls = new AtomicInteger();
    fake = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    fake.createContext("/v3/discovery:clusters", ex -> {
      byte[] body = (calls.incrementAndGet() == 1 ? "{not json" : good).getBytes(StandardCharsets.UTF_8);
      ex.getRequestBody().readAllBytes();
      ex.sendResponseHeaders(200, body.length);
      ex.getResponseBody().write(body);
      ex.close();
    });
    fake.start();
    client = client(Node.newBuilder().setId("n").build(), new RestXdsTransport(
        URI.create("http://127.0.0.1:" + fake.getAddress().getPort()), Duration.ofSeconds(1),
        Duration.ofMillis(50)));
    RecordingWatcher w = new RecordingWatcher();
    client.watchAll(ResourceType.CLUSTER, w);
    Await.until("x after the bad response", () -> w.latest.containsKey("x"));
    assertThat(calls.get()).isGreaterThanOrEqualTo(2);
  }

  static DiscoveryResponse clusters(String version, String... names) {
    DiscoveryResponse.Builder b = DiscoveryResponse.newBuilder().setVersionInfo(version)
        .setTypeUrl(ResourceType.CLUSTER.typeUrl());
    for (String n : names) {
      b.addResources(Any.pack(Cluster.newBuilder().setName(n).build()));
    }
    return b.build();
  }

  static String json(DiscoveryResponse r) throws Exception {
    return JsonFormat.printer().usingTypeRegistry(EnvoyTypeRegistry.get().typeRegistry()).print(r);
  }

  @Test
  void filesInEveryFormatAreLoadedAtOnceAndFollowed() throws Exception {
    Path json = dir.resolve("c.json");
    Path pb = dir.resolve("c.pb");
    Path text = dir.resolve("c.textproto");
    Path yaml = dir.resolve("c.yaml");
    Files.writeString(json, json(clusters("1", "from-json")));
    Files.write(pb, clusters("1", "from-pb").toByteArray());
    Files.writeString(text, TextFormat.printer().usingTypeRegistry(
        EnvoyTypeRegistry.get().protoTypeRegistry()).printToString(clusters("1", "from-text")));
    Files.writeString(yaml, "version_info: '1'\nresources:\n  - '@type': "
        + ResourceType.CLUSTER.typeUrl() + "\n    name: from-yaml\n");
    for (Path p : java.util.List.of(json, pb, text, yaml)) {
      XdsClient c = client(Node.newBuilder().setId("f").build(),
          new FileXdsTransport(t -> p, Duration.ofMillis(50)));
      try {
        RecordingWatcher w = new RecordingWatcher();
        c.watchAll(ResourceType.CLUSTER, w);
        String expected = "from-" + p.getFileName().toString().replaceAll(".*\\.(\\w+)$", "$1")
            .replace("textproto", "text");
        Await.until(expected, () -> w.latest.containsKey(expected));
      } finally {
        c.close();
      }
    }
  }

  @Test
  void aYamlFileLargerThanThreeMibIsRead() throws Exception {
    // What serve --publish-dir writes for some 15,000 clusters: past snakeyaml's default cap.
    StringBuilder yaml = new StringBuilder("version_info: '1'\nresources:\n");
    for (int i = 0; i < 40_000; i++) {
      yaml.append("  - '@type': ").append(ResourceType.CLUSTER.typeUrl())
          .append("\n    name: cluster-").append(i).append("\n");
    }
    assertThat(yaml.length()).isGreaterThan(3 * 1024 * 1024);
    Path file = Files.writeString(dir.resolve("clusters.yaml"), yaml);
    client = client(Node.newBuilder().setId("f").build(),
        new FileXdsTransport(t -> file, Duration.ofMillis(50)));
    RecordingWatcher w = new RecordingWatcher();
    client.watchAll(ResourceType.CLUSTER, w);
    Await.until("the last cluster", () -> w.latest.containsKey("cluster-39999"));
  }

  @Test
  void badFileIsRejectedAndTheLastGoodConfigKept() throws Exception {
    Path file = dir.resolve("clusters.json");
    Files.writeString(file, json(clusters("1", "a")));
    client = client(Node.newBuilder().setId("f").build(),
        new FileXdsTransport(t -> file, Duration.ofMillis(50)));
    RecordingWatcher w = new RecordingWatcher();
    client.watchAll(ResourceType.CLUSTER, w);
    Await.until("a", () -> w.latest.containsKey("a"));
    replace(file, "{ this is not json");
    replace(file, json(clusters("2", "a", "b")));
    Await.until("a and b", () -> w.latest.containsKey("b"));
    assertThat(w.events).doesNotContain("dne:a");
  }

  @Test
  void symlinkSwapOfTheDirectoryIsSeen() throws Exception {
    // The Kubernetes ConfigMap pattern: data -> v1, then data -> v2 by an atomic rename.
    Path v1 = Files.createDirectories(dir.resolve("v1"));
    Path v2 = Files.createDirectories(dir.resolve("v2"));
    Files.writeString(v1.resolve("clusters.json"), json(clusters("1", "old")));
    Files.writeString(v2.resolve("clusters.json"), json(clusters("2", "new")));
    Path data = dir.resolve("data");
    Files.createSymbolicLink(data, v1.getFileName());
    client = client(Node.newBuilder().setId("f").build(),
        new FileXdsTransport(t -> data.resolve("clusters.json"), Duration.ofMillis(50)));
    RecordingWatcher w = new RecordingWatcher();
    client.watchAll(ResourceType.CLUSTER, w);
    Await.until("old", () -> w.latest.containsKey("old"));
    Path tmpLink = dir.resolve("data.tmp");
    Files.createSymbolicLink(tmpLink, v2.getFileName());
    Files.move(tmpLink, data, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    Await.until("new", () -> w.latest.containsKey("new"));
  }

  @Test
  void publishDirLayoutMatchesWhatMeridianWrites() throws Exception {
    Path config = dir.resolve("config.yaml");
    Files.writeString(config, "resources:\n" + cluster("published", 1));
    Path out = dir.resolve("out");
    server = new MeridianServer(new MeridianServer.Options(config, "127.0.0.1", 0, 0, 100)
        .withPublish(out, dev.meridian.internal.server.FilePublisher.Format.YAML)).start();
    client = client(Node.newBuilder().setId("f").build(), FileXdsTransport.forPublishDir(out, "default"));
    RecordingWatcher w = new RecordingWatcher();
    client.watchAll(ResourceType.CLUSTER, w);
    Await.until("published", () -> w.latest.containsKey("published"));
  }
}
