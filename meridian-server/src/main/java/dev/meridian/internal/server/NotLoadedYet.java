package dev.meridian.internal.server;

import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;

/**
 * Before a config store (etcd) has delivered its first config, xDS calls fail UNAVAILABLE instead
 * of being served an empty config that would tell clients every resource is gone: a client
 * retries, or falls back to another replica (gRFC A71).
 */
final class NotLoadedYet implements ServerInterceptor {
  private final DiscoveryHub hub;

  NotLoadedYet(DiscoveryHub hub) {
    this.hub = hub;
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
      ServerCallHandler<Q, R> next) {
    if (!hub.isLoaded() && !call.getMethodDescriptor().getServiceName()
        .equals(io.grpc.health.v1.HealthGrpc.SERVICE_NAME)) { // health says NOT_SERVING itself
      // The store's address stays out of it: any client can read this.
      call.close(Status.UNAVAILABLE.withDescription("no config loaded yet; retry, or use "
          + "another replica"), new Metadata());
      return new ServerCall.Listener<>() {};
    }
    return next.startCall(call, headers);
  }
}
