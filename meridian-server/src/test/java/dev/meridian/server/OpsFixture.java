package dev.meridian.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.rpc.Status;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
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
    Path tmp = dir.resolve("meridian.yaml.tmp");
    Files.writeString(tmp, content);
    Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
        java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    await("config reloaded", () -> server.hub().current() != before);
  }

  AdsClient ads(String nodeId, String cluster) {
    return new AdsClient(channel, Node.newBuilder().setId(nodeId).setCluster(cluster).build());
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

  /** A raw ADS client: sends what the test says, queues what the server sends. */
  static final class AdsClient {
    final Node node;
    private final ResponseQueue<DiscoveryResponse> in = new ResponseQueue<>();
    final BlockingQueue<DiscoveryResponse> responses = in.responses;
    final CompletableFuture<io.grpc.Status> closed = in.closed;
    final StreamObserver<DiscoveryRequest> requests;
    private boolean first = true;

    AdsClient(ManagedChannel channel, Node node) {
      this.node = node;
      requests = AggregatedDiscoveryServiceGrpc.newStub(channel).streamAggregatedResources(in);
    }

    synchronized void send(DiscoveryRequest.Builder r) {
      if (first) {
        r.setNode(node);
        first = false;
      }
      requests.onNext(r.build());
    }

    /** Subscribes to {@code type} with {@code names} (none: wildcard) and returns the response. */
    DiscoveryResponse subscribe(String type, String... names) throws InterruptedException {
      send(DiscoveryRequest.newBuilder().setTypeUrl(type).addAllResourceNames(List.of(names)));
      return next(type);
    }

    void ack(DiscoveryResponse r, String... names) {
      send(DiscoveryRequest.newBuilder().setTypeUrl(r.getTypeUrl()).setVersionInfo(r.getVersionInfo())
          .setResponseNonce(r.getNonce()).addAllResourceNames(List.of(names)));
    }

    void nack(DiscoveryResponse r, String keptVersion, String message, String... names) {
      send(DiscoveryRequest.newBuilder().setTypeUrl(r.getTypeUrl()).setVersionInfo(keptVersion)
          .setResponseNonce(r.getNonce()).addAllResourceNames(List.of(names))
          .setErrorDetail(Status.newBuilder().setCode(3).setMessage(message)));
    }

    DiscoveryResponse next(String type) throws InterruptedException {
      DiscoveryResponse r = responses.poll(10, TimeUnit.SECONDS);
      assertThat(r).as("a response for " + type).isNotNull();
      assertThat(r.getTypeUrl()).isEqualTo(type);
      return r;
    }

    void disconnect() {
      requests.onCompleted();
    }
  }
}
