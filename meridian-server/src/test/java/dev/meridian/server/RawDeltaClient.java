package dev.meridian.server;


import dev.meridian.protocol.ResourceType;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.cluster.v3.ClusterDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.endpoint.v3.EndpointDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.route.v3.VirtualHostDiscoveryServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.CompletableFuture;

/** A raw Delta xDS stream for tests. */
final class RawDeltaClient implements AutoCloseable {
  private final StreamObserver<DeltaDiscoveryRequest> requests;
  private final ResponseQueue<DeltaDiscoveryResponse> in = new ResponseQueue<>();
  final CompletableFuture<Status> closed = in.closed;
  private final boolean ads;
  private Node node;

  RawDeltaClient(ManagedChannel channel, ResourceType perType, String nodeId) {
    this.ads = perType == null;
    this.node = Node.newBuilder().setId(nodeId).build();
    this.requests = perType == null
        ? AggregatedDiscoveryServiceGrpc.newStub(channel).deltaAggregatedResources(in)
        : switch (perType) {
          case CLUSTER -> ClusterDiscoveryServiceGrpc.newStub(channel).deltaClusters(in);
          case ENDPOINT -> EndpointDiscoveryServiceGrpc.newStub(channel).deltaEndpoints(in);
          case VIRTUAL_HOST -> VirtualHostDiscoveryServiceGrpc.newStub(channel).deltaVirtualHosts(in);
          default -> throw new IllegalArgumentException("add the stub for " + perType);
        };
  }

  void send(ResourceType type, DeltaDiscoveryRequest.Builder b) {
    if (ads) {
      b.setTypeUrl(type.typeUrl());
    }
    if (node != null) {
      b.setNode(node);
      node = null;
    }
    requests.onNext(b.build());
  }

  void ack(DeltaDiscoveryResponse r) {
    send(ResourceType.fromTypeUrl(r.getTypeUrl()).orElseThrow(),
        DeltaDiscoveryRequest.newBuilder().setResponseNonce(r.getNonce()));
  }

  DeltaDiscoveryResponse take() throws InterruptedException {
    return in.take();
  }

  Status awaitClose() throws Exception {
    return in.awaitClose();
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
