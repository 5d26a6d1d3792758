package dev.meridian.client;

import io.envoyproxy.envoy.service.cluster.v3.ClusterDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.endpoint.v3.EndpointDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.extension.v3.ExtensionConfigDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.listener.v3.ListenerDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.route.v3.RouteDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.route.v3.ScopedRoutesDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.route.v3.VirtualHostDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.runtime.v3.RuntimeDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.secret.v3.SecretDiscoveryServiceGrpc;
import io.grpc.CallOptions;
import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.TimeUnit;

/** {@link XdsTransport} over a gRPC channel to the bootstrap's server. */
public final class GrpcXdsTransport implements XdsTransport {
  private final ManagedChannel channel;

  public GrpcXdsTransport(Bootstrap.ServerInfo server) {
    ChannelCredentials creds = server.channelCreds() == Bootstrap.ChannelCreds.TLS
        ? TlsChannelCredentials.create() : InsecureChannelCredentials.create();
    this.channel = Grpc.newChannelBuilder(server.serverUri(), creds)
        .userAgent(Bootstrap.USER_AGENT)
        .keepAliveTime(5, TimeUnit.MINUTES)
        .build();
  }

  @Override
  public Call<DiscoveryRequest> openSotw(StreamScope scope, Listener<DiscoveryResponse> l) {
    return open(sotwMethod(scope), l);
  }

  @Override
  public Call<DeltaDiscoveryRequest> openDelta(StreamScope scope,
      Listener<DeltaDiscoveryResponse> l) {
    return open(deltaMethod(scope), l);
  }

  private <Q, R> Call<Q> open(MethodDescriptor<Q, R> method, Listener<R> l) {
    ClientResponseObserver<Q, R> observer = new ClientResponseObserver<>() {
      @Override
      public void beforeStart(ClientCallStreamObserver<Q> requestStream) {
        requestStream.setOnReadyHandler(l::onReady);
      }

      @Override
      public void onNext(R value) {
        l.onMessage(value);
      }

      @Override
      public void onError(Throwable t) {
        l.onClosed(Status.fromThrowable(t));
      }

      @Override
      public void onCompleted() {
        l.onClosed(Status.UNAVAILABLE.withDescription("the server closed the stream"));
      }
    };
    StreamObserver<Q> requests =
        ClientCalls.asyncBidiStreamingCall(channel.newCall(method, CallOptions.DEFAULT), observer);
    return new Call<>() {
      @Override
      public void send(Q request) {
        requests.onNext(request);
      }

      @Override
      public void cancel(String reason) {
        requests.onError(Status.CANCELLED.withDescription(reason).asRuntimeException());
      }
    };
  }

  static MethodDescriptor<DiscoveryRequest, DiscoveryResponse> sotwMethod(StreamScope scope) {
    if (!(scope instanceof StreamScope.OneType one)) {
      return AggregatedDiscoveryServiceGrpc.getStreamAggregatedResourcesMethod();
    }
    return switch (one.type()) {
      case LISTENER -> ListenerDiscoveryServiceGrpc.getStreamListenersMethod();
      case ROUTE -> RouteDiscoveryServiceGrpc.getStreamRoutesMethod();
      case SCOPED_ROUTE -> ScopedRoutesDiscoveryServiceGrpc.getStreamScopedRoutesMethod();
      case CLUSTER -> ClusterDiscoveryServiceGrpc.getStreamClustersMethod();
      case ENDPOINT -> EndpointDiscoveryServiceGrpc.getStreamEndpointsMethod();
      case SECRET -> SecretDiscoveryServiceGrpc.getStreamSecretsMethod();
      case RUNTIME -> RuntimeDiscoveryServiceGrpc.getStreamRuntimeMethod();
      case EXTENSION_CONFIG -> ExtensionConfigDiscoveryServiceGrpc.getStreamExtensionConfigsMethod();
      case VIRTUAL_HOST -> throw new IllegalArgumentException(
          "VHDS exists only as an incremental (Delta) service");
    };
  }

  static MethodDescriptor<DeltaDiscoveryRequest, DeltaDiscoveryResponse> deltaMethod(
      StreamScope scope) {
    if (!(scope instanceof StreamScope.OneType one)) {
      return AggregatedDiscoveryServiceGrpc.getDeltaAggregatedResourcesMethod();
    }
    return switch (one.type()) {
      case LISTENER -> ListenerDiscoveryServiceGrpc.getDeltaListenersMethod();
      case ROUTE -> RouteDiscoveryServiceGrpc.getDeltaRoutesMethod();
      case SCOPED_ROUTE -> ScopedRoutesDiscoveryServiceGrpc.getDeltaScopedRoutesMethod();
      case VIRTUAL_HOST -> VirtualHostDiscoveryServiceGrpc.getDeltaVirtualHostsMethod();
      case CLUSTER -> ClusterDiscoveryServiceGrpc.getDeltaClustersMethod();
      case ENDPOINT -> EndpointDiscoveryServiceGrpc.getDeltaEndpointsMethod();
      case SECRET -> SecretDiscoveryServiceGrpc.getDeltaSecretsMethod();
      case RUNTIME -> RuntimeDiscoveryServiceGrpc.getDeltaRuntimeMethod();
      case EXTENSION_CONFIG -> ExtensionConfigDiscoveryServiceGrpc.getDeltaExtensionConfigsMethod();
    };
  }

  @Override
  public void close() {
    channel.shutdownNow();
  }
}
