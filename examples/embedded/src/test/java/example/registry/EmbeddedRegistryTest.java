package example.registry;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Message;
import dev.meridian.server.Meridian;
import dev.meridian.server.Publisher;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.CallOptions;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The example as a user runs it: the registry on ephemeral loopback ports, a real proxyless
 * grpc-java client ({@code xds:///greeter}) and two greeter backends; instances change through
 * the registry's HTTP API and the client's RPCs follow.
 */
class EmbeddedRegistryTest {
  private static final Duration BOUND = Duration.ofSeconds(15);
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @Test
  void anInstanceChangeReachesAProxylessGrpcClient() throws Exception {
    try (Backend a = new Backend("a"); Backend b = new Backend("b")) {
      ServiceRegistry registry = new ServiceRegistry();
      registry.register("greeter", new ServiceRegistry.Instance("127.0.0.1", a.port()));
      try (EmbeddedRegistry server = EmbeddedRegistry.start(registry, loopback(), loopback(),
          loopback())) {
        // grpc-java reads its bootstrap once per JVM: this test's JVM is its own (see the pom)
        System.setProperty("io.grpc.xds.bootstrapConfig", bootstrap(server.xdsPort()));
        ManagedChannel channel = Grpc.newChannelBuilder("xds:///greeter",
            InsecureChannelCredentials.create()).build();
        try {
          assertThat(hello(channel, true)).isEqualTo("a");

          assertThat(post(server, "/register?service=greeter&address=127.0.0.1:" + b.port()))
              .isEqualTo(204);
          assertThat(post(server, "/deregister?service=greeter&address=127.0.0.1:" + a.port()))
              .isEqualTo(204);
          // the client's next RPCs go to b once the new ClusterLoadAssignment reaches it; one RPC
          // served by b proves nothing: the assignment in between (a and b) round-robins onto b too
          awaitUntil("RPCs served by b alone", () -> {
            for (int i = 0; i < 4; i++) {
              if (!"b".equals(helloOrError(channel))) {
                return false;
              }
            }
            return true;
          });
          for (int i = 0; i < 5; i++) {
            assertThat(hello(channel, false)).isEqualTo("b");
          }

          String clients = get(server, "/clients");
          assertThat(clients).contains("registry-test-client").contains(EmbeddedRegistry.GROUP);
          assertThat(get(server, "/config_dump")).contains("greeter-routes");
        } finally {
          channel.shutdownNow();
          channel.awaitTermination(5, TimeUnit.SECONDS);
          System.clearProperty("io.grpc.xds.bootstrapConfig");
        }
      }
    }
  }

  @Test
  void eachInstanceChangePublishesOnlyThatServicesEndpoints() {
    ServiceRegistry registry = new ServiceRegistry();
    registry.register("greeter", ServiceRegistry.Instance.parse("127.0.0.1:50051"));
    try (Meridian meridian = Meridian.builder().grouping(EmbeddedRegistry.GROUPING).build()) {
      Publisher publisher = meridian.publisher();
      RegistryPublisher.attach(registry, publisher, EmbeddedRegistry.GROUP);
      assertThat(meridian.isReady()).isTrue();
      assertThat(publisher.resources(EmbeddedRegistry.GROUP)).hasSize(4);

      registry.register("greeter", ServiceRegistry.Instance.parse("127.0.0.1:50052"));
      registry.register("pricing", ServiceRegistry.Instance.parse("10.0.0.7:8080"));
      registry.deregister("greeter", ServiceRegistry.Instance.parse("127.0.0.1:50051"));

      List<Message> now = publisher.resources(EmbeddedRegistry.GROUP);
      assertThat(now).hasSize(8);
      assertThat(now).filteredOn(m -> m instanceof ClusterLoadAssignment)
          .containsExactlyInAnyOrder(
              XdsResources.endpoints("greeter", registry.services().get("greeter")),
              XdsResources.endpoints("pricing", registry.services().get("pricing")));
      // deregistering the last instance keeps the service, with no endpoints
      registry.deregister("pricing", ServiceRegistry.Instance.parse("10.0.0.7:8080"));
      assertThat(publisher.resources(EmbeddedRegistry.GROUP))
          .contains(ClusterLoadAssignment.newBuilder().setClusterName("pricing").build());
    }
  }

  @Test
  void aNodeWithoutAnIdIsRefused() throws Exception {
    try (EmbeddedRegistry server = EmbeddedRegistry.start(new ServiceRegistry(), loopback(),
        loopback(), loopback())) {
      ManagedChannel channel = Grpc.newChannelBuilder("127.0.0.1:" + server.xdsPort(),
          InsecureChannelCredentials.create()).build();
      try {
        CompletableFuture<Status> ended = new CompletableFuture<>();
        StreamObserver<DiscoveryRequest> requests = ClientCalls.asyncBidiStreamingCall(
            channel.newCall(AggregatedDiscoveryServiceGrpc.getStreamAggregatedResourcesMethod(),
                CallOptions.DEFAULT), new StreamObserver<DiscoveryResponse>() {
              @Override
              public void onNext(DiscoveryResponse r) {
                ended.completeExceptionally(new AssertionError("served: " + r));
              }

              @Override
              public void onError(Throwable t) {
                ended.complete(Status.fromThrowable(t));
              }

              @Override
              public void onCompleted() {
                ended.complete(Status.OK);
              }
            });
        requests.onNext(DiscoveryRequest.newBuilder().setNode(Node.newBuilder().setCluster("x"))
            .setTypeUrl("type.googleapis.com/envoy.config.cluster.v3.Cluster").build());
        assertThat(ended.get(BOUND.toSeconds(), TimeUnit.SECONDS).getCode())
            .isEqualTo(Status.Code.PERMISSION_DENIED);
      } finally {
        channel.shutdownNow();
        channel.awaitTermination(5, TimeUnit.SECONDS);
      }
    }
  }

  private static InetSocketAddress loopback() {
    return new InetSocketAddress("127.0.0.1", 0);
  }

  /** A gRFC A27 bootstrap: the registry's xDS port, over ADS, and this client's node. */
  private static String bootstrap(int xdsPort) {
    return """
        {
          "xds_servers": [{
            "server_uri": "127.0.0.1:%d",
            "channel_creds": [{"type": "insecure"}],
            "server_features": ["xds_v3"]
          }],
          "node": {"id": "registry-test-client", "cluster": "example"}
        }""".formatted(xdsPort);
  }

  private static String hello(ManagedChannel channel, boolean waitForReady) {
    CallOptions options = CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS);
    return ClientCalls.blockingUnaryCall(channel, HELLO,
        waitForReady ? options.withWaitForReady() : options, "hi");
  }

  private static String helloOrError(ManagedChannel channel) {
    try {
      return hello(channel, false);
    } catch (StatusRuntimeException e) {
      return "error:" + e.getStatus().getCode();
    }
  }

  /** Polls {@code condition} (each poll an RPC, no sleeping) until it holds, within BOUND. */
  private static void awaitUntil(String what, java.util.function.BooleanSupplier condition) {
    long deadline = System.nanoTime() + BOUND.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out after " + BOUND + " waiting for: " + what);
      }
    }
  }

  private static int post(EmbeddedRegistry server, String pathAndQuery) throws Exception {
    URI uri = URI.create("http://127.0.0.1:" + server.httpAddress().getPort() + pathAndQuery);
    return HTTP.send(HttpRequest.newBuilder(uri).POST(HttpRequest.BodyPublishers.noBody())
        .timeout(BOUND).build(), HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  private static String get(EmbeddedRegistry server, String path) throws Exception {
    URI uri = URI.create("http://127.0.0.1:" + server.adminAddress().getPort() + path);
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(uri).timeout(BOUND).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    return r.body();
  }

  // A proto-free greeter: one unary method whose request and response are UTF-8 strings; each
  // backend answers with its own name, so the test sees which instance served an RPC.

  private static final MethodDescriptor.Marshaller<String> UTF8 =
      new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(String value) {
          return new ByteArrayInputStream(value.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public String parse(InputStream stream) {
          try {
            return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        }
      };

  private static final MethodDescriptor<String, String> HELLO =
      MethodDescriptor.<String, String>newBuilder()
          .setType(MethodDescriptor.MethodType.UNARY)
          .setFullMethodName("example.Greeter/Hello")
          .setRequestMarshaller(UTF8)
          .setResponseMarshaller(UTF8)
          .build();

  private static final class Backend implements AutoCloseable {
    private final Server server;

    Backend(String name) throws IOException {
      ServerServiceDefinition service = ServerServiceDefinition.builder("example.Greeter")
          .addMethod(HELLO, ServerCalls.asyncUnaryCall((req, out) -> {
            out.onNext(name);
            out.onCompleted();
          }))
          .build();
      server = NettyServerBuilder.forAddress(loopback()).addService(service).build().start();
    }

    int port() {
      return server.getPort();
    }

    @Override
    public void close() throws InterruptedException {
      server.shutdownNow();
      server.awaitTermination(5, TimeUnit.SECONDS);
    }
  }
}
