package dev.meridian.client;

import io.envoyproxy.envoy.service.cluster.v3.ClusterDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.endpoint.v3.EndpointDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.endpoint.v3.LocalityEndpointDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.extension.v3.ExtensionConfigDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.listener.v3.ListenerDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.route.v3.RouteDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.route.v3.ScopedRoutesDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.route.v3.VirtualHostDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.runtime.v3.RuntimeDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.secret.v3.SecretDiscoveryServiceGrpc;
import io.grpc.CallOptions;
import io.grpc.ChannelCredentials;
import io.grpc.ClientCall;
import io.grpc.ConnectivityState;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.util.concurrent.TimeUnit;

/** {@link XdsTransport} over a gRPC channel to the bootstrap's server. */
public final class GrpcXdsTransport implements XdsTransport {
  private final ManagedChannel channel;
  /** The TLS files' material, re-read every refresh interval; null for an insecure channel. */
  private final ReloadingTlsCredentials tls;
  /** A timer of our own for those re-reads, when the caller gave none. */
  private final SystemScheduler ownScheduler;
  /** The largest response read; 0: the channel's own setting (a channel the caller built). */
  private final int maxResponseBytes;

  /** To {@code server}; TLS files are re-read on a timer thread of this transport's own. */
  public GrpcXdsTransport(Bootstrap.ServerInfo server) {
    this(server, null);
  }

  /**
   * To {@code server}, with its channel creds: insecure, or gRFC A65 TLS whose files are re-read
   * every {@code refresh_interval} on {@code scheduler} (null: a timer of this transport's own).
   */
  public GrpcXdsTransport(Bootstrap.ServerInfo server, Scheduler scheduler) {
    this(server, scheduler, XdsClient.DEFAULT_MAX_RESPONSE_BYTES);
  }

  /**
   * As {@link #GrpcXdsTransport(Bootstrap.ServerInfo, Scheduler)}, reading responses of up to
   * {@code maxResponseBytes}; a larger one ends its stream RESOURCE_EXHAUSTED, which the client
   * reports as {@link XdsError.Kind#RESPONSE_TOO_LARGE}.
   */
  public GrpcXdsTransport(Bootstrap.ServerInfo server, Scheduler scheduler, int maxResponseBytes) {
    this.maxResponseBytes = maxResponseBytes;
    ChannelCredentials creds;
    if (server.channelCreds() == Bootstrap.ChannelCreds.TLS) {
      ownScheduler = scheduler == null ? new SystemScheduler() : null;
      // A file that broke since the bootstrap was read is logged and retried: the client runs on
      // and connects once the files are good again.
      tls = ReloadingTlsCredentials.start(server.tls(),
          scheduler == null ? ownScheduler : scheduler);
      creds = tls.channelCredentials();
    } else {
      ownScheduler = null;
      tls = null;
      creds = InsecureChannelCredentials.create();
    }
    this.channel = Grpc.newChannelBuilder(server.serverUri(), creds)
        .userAgent(Bootstrap.USER_AGENT)
        .keepAliveTime(5, TimeUnit.MINUTES)
        .maxInboundMessageSize(maxResponseBytes)
        .build();
  }

  /** Over a channel the caller built (its own credentials, executor...); closed with this. */
  public GrpcXdsTransport(ManagedChannel channel) {
    this.channel = channel;
    this.tls = null;
    this.ownScheduler = null;
    this.maxResponseBytes = 0;
  }

  /** The TLS material this transport's channel uses; null when it is not TLS from a bootstrap. */
  public ReloadingTlsCredentials tls() {
    return tls;
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
    ClientCall<Q, R> call = channel.newCall(method, CallOptions.DEFAULT);
    // A ClientCall delivers no message until request(n) asks for it: the client's read-side
    // flow control (XdsTransport), as grpc-java's own xDS transport does.
    call.start(new ClientCall.Listener<>() {
      @Override
      public void onReady() {
        l.onReady();
      }

      @Override
      public void onMessage(R message) {
        l.onMessage(message);
      }

      @Override
      public void onClose(Status status, Metadata trailers) {
        l.onClosed(status.isOk()
            ? Status.UNAVAILABLE.withDescription("the server closed the stream")
            : ResponseTooLarge.mark(status, maxResponseBytes));
      }
    }, new Metadata());
    return new Call<>() {
      @Override
      public void send(Q request) {
        call.sendMessage(request);
      }

      @Override
      public void request(int count) {
        call.request(count);
      }

      @Override
      public void cancel(String reason) {
        call.cancel(reason, null);
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
      case VIRTUAL_HOST, LB_ENDPOINT -> throw new IllegalArgumentException(
          one.type().abbreviation() + " exists only as an incremental (Delta) service");
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
      case LB_ENDPOINT -> LocalityEndpointDiscoveryServiceGrpc.getDeltaLocalityEndpointsMethod();
    };
  }

  /** Follows the channel's connectivity state (gRPC's notifyWhenStateChanged) until shutdown. */
  @Override
  public void whenConnected(Runnable task) {
    follow(channel.getState(false), task);
  }

  private void follow(ConnectivityState last, Runnable task) {
    channel.notifyWhenStateChanged(last, () -> {
      ConnectivityState now = channel.getState(false);
      if (now == ConnectivityState.SHUTDOWN) {
        return;
      }
      if (now == ConnectivityState.READY && last != ConnectivityState.READY) {
        task.run();
      }
      follow(now, task);
    });
  }

  @Override
  public void close() {
    channel.shutdownNow();
    if (tls != null) {
      tls.close();
    }
    if (ownScheduler != null) {
      ownScheduler.close();
    }
  }
}
