package dev.meridian.internal.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.meridian.testing.ConfigFiles;
import dev.meridian.testing.RawXdsClient;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** A live server on 127.0.0.1 ephemeral ports, raw ADS clients and an HTTP client, for tests. */
final class OpsFixture implements AutoCloseable {
  static final String CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
  static final String EDS = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";
  static final String LDS = "type.googleapis.com/envoy.config.listener.v3.Listener";

  static String config(String v1ConnectTimeout) {
    return """
        resources:
          - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
            name: greeter-v1
            type: EDS
            connect_timeout: %s
            eds_cluster_config: { eds_config: { ads: {}, resource_api_version: V3 } }
          - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
            name: greeter-v2
            type: EDS
            connect_timeout: 1s
            eds_cluster_config: { eds_config: { ads: {}, resource_api_version: V3 } }
          - "@type": type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment
            cluster_name: greeter-v1
            endpoints:
              - lb_endpoints:
                  - endpoint: { address: { socket_address: { address: 127.0.0.1, port_value: 8081 } } }
          - "@type": type.googleapis.com/envoy.config.listener.v3.Listener
            name: http
            address: { socket_address: { address: 0.0.0.0, port_value: 10000 } }
        """.formatted(v1ConnectTimeout);
  }

  final Path dir;
  final Path file;
  final MeridianServer server;
  final ManagedChannel channel;
  final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  OpsFixture(Path dir) throws Exception {
    this(dir, o -> o);
  }

  OpsFixture(Path dir, java.util.function.UnaryOperator<MeridianServer.Options> tweak)
      throws Exception {
    this.dir = dir;
    this.file = dir.resolve("meridian.yaml");
    Files.writeString(file, config("1s"));
    server = new MeridianServer(tweak.apply(
        new MeridianServer.Options(file, "127.0.0.1", 0, 0, 50))).start();
    channel = ManagedChannelBuilder.forAddress("127.0.0.1", server.xdsPort()).usePlaintext().build();
  }

  /**
   * Replaces the config file atomically (the watcher must never see it half-written, which would
   * count as a failed reload) and waits until the server serves the new content.
   */
  void reload(String content) throws IOException {
    var before = server.hub().current();
    ConfigFiles.replaceByRename(file, content);
    await("config reloaded", () -> server.hub().current() != before);
  }

  /** A raw SotW ADS client on the fixture's channel. */
  RawXdsClient.Sotw ads(String nodeId, String cluster) {
    return RawXdsClient.sotwAds(channel, Node.newBuilder().setId(nodeId).setCluster(cluster).build());
  }

  HttpResponse<String> get(String path) throws IOException, InterruptedException {
    return http.send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + server.httpPort() + path))
        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
  }

  JsonObject getJson(String path) throws IOException, InterruptedException {
    HttpResponse<String> r = get(path);
    assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(
        v -> assertThat(v).startsWith("application/json"));
    return JsonParser.parseString(r.body()).getAsJsonObject();
  }

  /** Waits for a condition, bounded; fails with {@code what} if it does not hold in time. */
  static void await(String what, BooleanSupplier condition) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting: " + what);
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
    }
  }

  @Override
  public void close() throws Exception {
    channel.shutdownNow();
    server.close();
    channel.awaitTermination(5, TimeUnit.SECONDS);
  }
}
