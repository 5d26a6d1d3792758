package dev.meridian.server;

import static org.assertj.core.api.Assertions.assertThat;

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
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A raw Delta xDS stream for tests. */
final class RawDeltaClient implements AutoCloseable {
  private final StreamObserver<DeltaDiscoveryRequest> requests;
  private final BlockingQueue<DeltaDiscoveryResponse> responses = new LinkedBlockingQueue<>();
  final CompletableFuture<Status> closed = new CompletableFuture<>();
  private final boolean ads;
  private Node node;

  RawDeltaClient(ManagedChannel channel, ResourceType perType, String nodeId) {
    this.ads = perType == null;
    this.node = Node.newBuilder().setId(nodeId).build();
    StreamObserver<DeltaDiscoveryResponse> observer = new StreamObserver<>() {
      @Override public void onNext(DeltaDiscoveryResponse r) {
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
        ? AggregatedDiscoveryServiceGrpc.newStub(channel).deltaAggregatedResources(observer)
        : switch (perType) {
          case CLUSTER -> ClusterDiscoveryServiceGrpc.newStub(channel).deltaClusters(observer);
          case ENDPOINT -> EndpointDiscoveryServiceGrpc.newStub(channel).deltaEndpoints(observer);
          case VIRTUAL_HOST -> VirtualHostDiscoveryServiceGrpc.newStub(channel).deltaVirtualHosts(observer);
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
    DeltaDiscoveryResponse r = responses.poll(RawXdsClient.WAIT.toMillis(), TimeUnit.MILLISECONDS);
    assertThat(r).as("a response within %s", RawXdsClient.WAIT).isNotNull();
    return r;
  }

  Status awaitClose() throws Exception {
    return closed.get(RawXdsClient.WAIT.toMillis(), TimeUnit.MILLISECONDS);
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
