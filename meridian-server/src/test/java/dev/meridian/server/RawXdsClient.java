package dev.meridian.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.protocol.ResourceType;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.cluster.v3.ClusterDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.endpoint.v3.EndpointDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.extension.v3.ExtensionConfigDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.listener.v3.ListenerDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.route.v3.RouteDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.route.v3.ScopedRoutesDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.runtime.v3.RuntimeDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.secret.v3.SecretDiscoveryServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A raw SotW xDS stream for tests: send requests, take responses in order. */
final class RawXdsClient implements AutoCloseable {
  static final Duration WAIT = Duration.ofSeconds(10);

  private final StreamObserver<DiscoveryRequest> requests;
  private final BlockingQueue<DiscoveryResponse> responses = new LinkedBlockingQueue<>();
  final CompletableFuture<Status> closed = new CompletableFuture<>();
  private final boolean ads;
  private Node node;

  private RawXdsClient(ManagedChannel channel, ResourceType perType, Node node) {
    this.ads = perType == null;
    this.node = node;
    StreamObserver<DiscoveryResponse> observer = new StreamObserver<>() {
      @Override public void onNext(DiscoveryResponse r) {
        responses.add(r);
      }
      @Override public void onError(Throwable t) {
        closed.complete(Status.fromThrowable(t));
      }
      @Override public void onCompleted() {
        closed.complete(Status.OK);
      }
    };
    this.requests = perType == null
        ? AggregatedDiscoveryServiceGrpc.newStub(channel).streamAggregatedResources(observer)
        : switch (perType) {
          case LISTENER -> ListenerDiscoveryServiceGrpc.newStub(channel).streamListeners(observer);
          case ROUTE -> RouteDiscoveryServiceGrpc.newStub(channel).streamRoutes(observer);
          case SCOPED_ROUTE -> ScopedRoutesDiscoveryServiceGrpc.newStub(channel).streamScopedRoutes(observer);
          case CLUSTER -> ClusterDiscoveryServiceGrpc.newStub(channel).streamClusters(observer);
          case ENDPOINT -> EndpointDiscoveryServiceGrpc.newStub(channel).streamEndpoints(observer);
          case SECRET -> SecretDiscoveryServiceGrpc.newStub(channel).streamSecrets(observer);
          case RUNTIME -> RuntimeDiscoveryServiceGrpc.newStub(channel).streamRuntime(observer);
          case EXTENSION_CONFIG -> ExtensionConfigDiscoveryServiceGrpc.newStub(channel).streamExtensionConfigs(observer);
          case VIRTUAL_HOST -> throw new IllegalArgumentException("no SotW VHDS");
        };
  }

  static RawXdsClient ads(ManagedChannel channel, String nodeId) {
    return new RawXdsClient(channel, null, Node.newBuilder().setId(nodeId).build());
  }

  static RawXdsClient perType(ManagedChannel channel, ResourceType type, String nodeId) {
    return new RawXdsClient(channel, type, Node.newBuilder().setId(nodeId).build());
  }

  /** Sends a request; the node goes on the first one only, the type URL only on ADS. */
  void send(ResourceType type, String version, String nonce, String... names) {
    DiscoveryRequest.Builder b = DiscoveryRequest.newBuilder().setVersionInfo(version)
        .setResponseNonce(nonce).addAllResourceNames(Arrays.asList(names));
    if (ads) {
      b.setTypeUrl(type.typeUrl());
    }
    send(b);
  }

  void send(DiscoveryRequest.Builder b) {
    if (node != null && !b.hasNode()) {
      b.setNode(node);
    }
    node = null;
    requests.onNext(b.build());
  }

  void ack(DiscoveryResponse r, String... names) {
    send(ResourceType.fromTypeUrl(r.getTypeUrl()).orElseThrow(), r.getVersionInfo(), r.getNonce(), names);
  }

  DiscoveryResponse take() throws InterruptedException {
    DiscoveryResponse r = responses.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    assertThat(r).as("a response within %s", WAIT).isNotNull();
    return r;
  }

  Status awaitClose() throws Exception {
    return closed.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
  }

  boolean hasPendingResponse() {
    return !responses.isEmpty();
  }

  @Override
  public void close() {
    try {
      requests.onCompleted();
    } catch (RuntimeException e) {
      // already closed
    }
  }
}
