package dev.meridian.internal.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.util.JsonFormat;
import dev.meridian.internal.protocol.EnvoyTypeRegistry;
import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** REST-JSON polling and filesystem publishing (spec "REST-JSON polling subscriptions", "Filesystem subscriptions"). */
class RestAndFilesTest {
  @TempDir Path dir;
  Path config;
  Path publish;
  MeridianServer server;
  final HttpClient http = HttpClient.newHttpClient();

  static final String NODE = "\"node\": {\"id\": \"rest-1\"}";

  void start(String yaml) throws Exception {
    config = dir.resolve("config.yaml");
    publish = dir.resolve("published");
    Files.writeString(config, yaml);
    server = new MeridianServer(new MeridianServer.Options(config, "127.0.0.1", 0, 0, 200)
        .withRestMaxWait(java.time.Duration.ofSeconds(30)).withRestPort(0)
        .withPublish(publish, FilePublisher.Format.YAML)).start();
  }

  void rewrite(String yaml) throws Exception {
    Path tmp = dir.resolve(".tmp");
    Files.writeString(tmp, yaml);
    Files.move(tmp, config, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  HttpRequest.Builder post(String path, String body) {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.restPort() + path))
        .POST(HttpRequest.BodyPublishers.ofString(body)).header("Content-Type", "application/json");
  }

  HttpResponse<String> send(HttpRequest.Builder b) throws Exception {
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  static DiscoveryResponse parse(String json) throws Exception {
    DiscoveryResponse.Builder b = DiscoveryResponse.newBuilder();
    EnvoyTypeRegistry.get().parser().merge(json, b);
    return b.build();
  }

  static final String TWO = "resources:\n" + ServeTest.cluster("a", 1) + ServeTest.cluster("b", 1);

  @Test
  void pollReturnsTheResourcesThenNotModifiedAtTheSameVersion() throws Exception {
    start(TWO);
    HttpResponse<String> r = send(post("/v3/discovery:clusters", "{" + NODE + "}"));
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Type")).hasValue("application/json");
    assertThat(r.body()).contains("\"@type\": \"type.googleapis.com/envoy.config.cluster.v3.Cluster\"");
    DiscoveryResponse resp = parse(r.body());
    assertThat(resp.getResourcesCount()).isEqualTo(2);
    HttpResponse<String> again = send(post("/v3/discovery:clusters",
        "{" + NODE + ", \"version_info\": \"" + resp.getVersionInfo() + "\"}"));
    assertThat(again.statusCode()).isEqualTo(304);
    // An ACK-style poll carrying the response's nonce is the same question (the nonce is optional).
    HttpResponse<String> withNonce = send(post("/v3/discovery:clusters", "{" + NODE
        + ", \"version_info\": \"" + resp.getVersionInfo() + "\", \"response_nonce\": \""
        + resp.getNonce() + "\"}"));
    assertThat(withNonce.statusCode()).isEqualTo(304);
  }

  @Test
  void namedRequestAndWildcardSelectLikeGrpc() throws Exception {
    start(TWO);
    DiscoveryResponse named = parse(send(post("/v3/discovery:clusters",
        "{" + NODE + ", \"resource_names\": [\"b\"]}")).body());
    assertThat(named.getResourcesList()).singleElement()
        .satisfies(a -> assertThat(a.unpack(Cluster.class).getName()).isEqualTo("b"));
    DiscoveryResponse star = parse(send(post("/v3/discovery:clusters",
        "{" + NODE + ", \"resourceNames\": [\"*\"]}")).body());
    assertThat(star.getResourcesCount()).isEqualTo(2);
  }

  @Test
  void heldPollIsAnsweredWhenTheConfigChanges() throws Exception {
    start(TWO);
    DiscoveryResponse first = parse(send(post("/v3/discovery:clusters", "{" + NODE + "}")).body());
    CompletableFuture<HttpResponse<String>> held = http.sendAsync(post("/v3/discovery:clusters",
        "{" + NODE + ", \"version_info\": \"" + first.getVersionInfo() + "\"}")
        .header("Prefer", "wait=20").build(), HttpResponse.BodyHandlers.ofString());
    // The poll is held (not answered 304 at once) until the file changes.
    awaitHeld();
    assertThat(held).isNotDone();
    rewrite("resources:\n" + ServeTest.cluster("a", 1) + ServeTest.cluster("b", 7));
    HttpResponse<String> r = held.get(10, TimeUnit.SECONDS);
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(parse(r.body()).getVersionInfo()).isNotEqualTo(first.getVersionInfo());
  }

  /** Waits until a held poll is registered with the hub (bounded). */
  void awaitHeld() throws InterruptedException {
    int baseline = 1; // the file publisher
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (server.hub().streamCount() <= baseline && System.nanoTime() < deadline) {
      Thread.onSpinWait();
    }
    assertThat(server.hub().streamCount()).isGreaterThan(baseline);
  }

  @Test
  void heldPollTimesOutWithNotModified() throws Exception {
    start(TWO);
    DiscoveryResponse first = parse(send(post("/v3/discovery:clusters", "{" + NODE + "}")).body());
    HttpResponse<String> r = send(post("/v3/discovery:clusters",
        "{" + NODE + ", \"version_info\": \"" + first.getVersionInfo() + "\"}")
        .header("Prefer", "respond-async, wait=1"));
    assertThat(r.statusCode()).isEqualTo(304);
  }

  @Test
  void ttlWrappingAndGroupsFollowTheNode() throws Exception {
    start("""
        resources:
          - "@type": type.googleapis.com/envoy.service.discovery.v3.Resource
            ttl: 30s
            resource: { "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster, name: temp }
        groups:
          - name: canary
            match: { node_id: "canary-*" }
            resources:
              - { "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster, name: canary }
        """);
    DiscoveryResponse wrapped = parse(send(post("/v3/discovery:clusters",
        "{\"node\": {\"id\": \"x\", \"client_features\": [\"xds.config.supports-resource-ttl\","
            + " \"xds.config.resource-in-sotw\"]}}")).body());
    assertThat(wrapped.getResources(0).is(io.envoyproxy.envoy.service.discovery.v3.Resource.class)).isTrue();
    DiscoveryResponse plain = parse(send(post("/v3/discovery:clusters", "{" + NODE + "}")).body());
    assertThat(plain.getResources(0).is(Cluster.class)).isTrue();
    DiscoveryResponse canary = parse(send(post("/v3/discovery:clusters",
        "{\"node\": {\"id\": \"canary-1\"}}")).body());
    assertThat(canary.getResources(0).unpack(Cluster.class).getName()).isEqualTo("canary");
  }

  @Test
  void badInputGetsAClearError() throws Exception {
    start(TWO);
    HttpResponse<String> unknownPath = send(post("/v3/discovery:nope", "{" + NODE + "}"));
    assertThat(unknownPath.statusCode()).isEqualTo(404);
    assertThat(unknownPath.body()).contains("clusters");
    HttpResponse<String> malformed = send(post("/v3/discovery:clusters", "{not json"));
    assertThat(malformed.statusCode()).isEqualTo(400);
    assertThat(malformed.body()).contains("invalid DiscoveryRequest JSON");
    HttpResponse<String> unknownField = send(post("/v3/discovery:clusters", "{" + NODE + ", \"colour\": 1}"));
    assertThat(unknownField.statusCode()).isEqualTo(400);
    assertThat(unknownField.body()).contains("colour");
    HttpResponse<String> wrongType = send(post("/v3/discovery:clusters", "{" + NODE
        + ", \"type_url\": \"" + ResourceType.LISTENER.typeUrl() + "\"}"));
    assertThat(wrongType.statusCode()).isEqualTo(400);
    assertThat(wrongType.body()).contains("does not match");
    HttpResponse<String> noNode = send(post("/v3/discovery:clusters", "{}"));
    assertThat(noNode.statusCode()).isEqualTo(400);
    assertThat(noNode.body()).contains("node");
    HttpResponse<String> get = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
        + server.restPort() + "/v3/discovery:clusters")).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(get.statusCode()).isEqualTo(405);
  }

  @Test
  void restDiscoveryHasItsOwnPortAndTheAdminPortServesOnlyAdmin() throws Exception {
    // Issue 20: REST-JSON moved off the admin port, which is loopback-only and shows everything.
    start(TWO);
    HttpResponse<String> onAdmin = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
        + server.httpPort() + "/v3/discovery:clusters"))
        .POST(HttpRequest.BodyPublishers.ofString("{" + NODE + "}")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(onAdmin.statusCode()).isEqualTo(404);
    assertThat(send(post("/v3/discovery:clusters", "{" + NODE + "}")).statusCode()).isEqualTo(200);
    assertThat(send(post("/config_dump", "{}")).statusCode()).isEqualTo(404);
  }

  @Test
  void publishedFilesHoldEachGroupsResourcesAndChangeOnlyWhenTheContentDoes() throws Exception {
    start(TWO + "groups:\n  - name: canary\n    match: { node_id: \"c-*\" }\n    resources: []\n");
    Path clusters = publish.resolve("default").resolve("clusters.yaml");
    assertThat(clusters).exists();
    assertThat(publish.resolve("canary").resolve("clusters.yaml")).exists();
    assertThat(publish.resolve("default").resolve("virtual-hosts.yaml")).doesNotExist();
    String yaml = Files.readString(clusters);
    assertThat(yaml).contains("type.googleapis.com/envoy.config.cluster.v3.Cluster").contains("name: a");
    // It is a DiscoveryResponse, the form Envoy's path config sources read.
    Object tree = new org.yaml.snakeyaml.Yaml().load(yaml);
    DiscoveryResponse.Builder b = DiscoveryResponse.newBuilder();
    EnvoyTypeRegistry.get().parser().merge(new com.google.gson.Gson().toJson(tree), b);
    assertThat(b.getResourcesCount()).isEqualTo(2);
    Object listenersKey = Files.readAttributes(publish.resolve("default").resolve("listeners.yaml"),
        java.nio.file.attribute.BasicFileAttributes.class).fileKey();
    rewrite("resources:\n" + ServeTest.cluster("a", 1) + ServeTest.cluster("b", 3));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (Files.readString(clusters).equals(yaml) && System.nanoTime() < deadline) {
      Thread.onSpinWait();
    }
    assertThat(Files.readString(clusters)).contains("3s");
    // The canary group is gone: its files are removed. Unchanged files were not rewritten.
    assertThat(publish.resolve("canary")).doesNotExist();
    assertThat(Files.readAttributes(publish.resolve("default").resolve("listeners.yaml"),
        java.nio.file.attribute.BasicFileAttributes.class).fileKey()).isEqualTo(listenersKey);
  }

  @Test
  void jsonAndBinaryFormatsRoundTrip() throws Exception {
    start(TWO);
    FilePublisher json = new FilePublisher(dir.resolve("j"), FilePublisher.Format.JSON);
    json.publish(server.hub().current());
    DiscoveryResponse.Builder b = DiscoveryResponse.newBuilder();
    EnvoyTypeRegistry.get().parser().merge(Files.readString(dir.resolve("j/default/clusters.json")), b);
    assertThat(b.getResourcesCount()).isEqualTo(2);
    FilePublisher pb = new FilePublisher(dir.resolve("p"), FilePublisher.Format.PB);
    pb.publish(server.hub().current());
    assertThat(DiscoveryResponse.parseFrom(Files.readAllBytes(dir.resolve("p/default/clusters.pb")))
        .getResourcesCount()).isEqualTo(2);
  }
}
