package dev.meridian.server;


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
import java.util.concurrent.CompletableFuture;

/** A raw SotW xDS stream for tests: send requests, take responses in order. */
final class RawXdsClient implements AutoCloseable {
  static final Duration WAIT = ResponseQueue.WAIT;

  private final StreamObserver<DiscoveryRequest> requests;
  private final ResponseQueue<DiscoveryResponse> in = new ResponseQueue<>();
  final CompletableFuture<Status> closed = in.closed;
  private final boolean ads;
  private Node node;

  private RawXdsClient(ManagedChannel channel, ResourceType perType, Node node) {
    this.ads = perType == null;
    this.node = node;
    this.requests = perType == null
        ? AggregatedDiscoveryServiceGrpc.newStub(channel).streamAggregatedResources(in)
        : switch (perType) {
          case LISTENER -> ListenerDiscoveryServiceGrpc.newStub(channel).streamListeners(in);
          case ROUTE -> RouteDiscoveryServiceGrpc.newStub(channel).streamRoutes(in);
          case SCOPED_ROUTE -> ScopedRoutesDiscoveryServiceGrpc.newStub(channel).streamScopedRoutes(in);
          case CLUSTER -> ClusterDiscoveryServiceGrpc.newStub(channel).streamClusters(in);
          case ENDPOINT -> EndpointDiscoveryServiceGrpc.newStub(channel).streamEndpoints(in);
          case SECRET -> SecretDiscoveryServiceGrpc.newStub(channel).streamSecrets(in);
          case RUNTIME -> RuntimeDiscoveryServiceGrpc.newStub(channel).streamRuntime(in);
          case EXTENSION_CONFIG -> ExtensionConfigDiscoveryServiceGrpc.newStub(channel).streamExtensionConfigs(in);
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
    return in.take();
  }

  Status awaitClose() throws Exception {
    return in.awaitClose();
  }

  boolean hasPendingResponse() {
    return !in.responses.isEmpty();
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
