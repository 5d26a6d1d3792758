package dev.meridian.internal.server;

import dev.meridian.internal.protocol.NodeMatcher;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;

/**
 * Who may read CSDS under mTLS (issue 20): it shows every connected client's config, across all
 * groups, so only identities matching {@code serve --csds-identity} may; everyone else, and every
 * caller when the flag is absent, gets PERMISSION_DENIED saying so.
 */
final class CsdsAccess implements ServerInterceptor {
  private final String glob;
  private final NodeMatcher allowed;

  CsdsAccess(String glob) {
    this.glob = glob;
    this.allowed = glob == null ? null : new NodeMatcher(null, null, glob);
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
      ServerCallHandler<Q, R> next) {
    String identity = Identities.of(call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION))
        .identity();
    if (allowed == null || identity == null || !allowed.allowsIdentity(identity)) {
      call.close(Status.PERMISSION_DENIED.withDescription(allowed == null
          ? "CSDS shows every client's config; under mTLS only the identities of "
              + "'serve --csds-identity GLOB' may read it, and none is set"
          : "identity " + (identity == null ? "none" : "'" + identity + "'")
              + " may not read CSDS (serve --csds-identity " + glob + ")"), new Metadata());
      return new ServerCall.Listener<>() {};
    }
    return next.startCall(call, headers);
  }
}
