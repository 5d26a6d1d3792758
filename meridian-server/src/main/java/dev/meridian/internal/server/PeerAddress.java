package dev.meridian.internal.server;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.net.InetSocketAddress;
import java.net.SocketAddress;

/**
 * Makes each call's remote address, and the identity of its verified client certificate (issue
 * 20), available to stream handlers through the gRPC Context.
 */
final class PeerAddress implements ServerInterceptor {
  static final Context.Key<String> KEY = Context.key("meridian-peer");
  static final Context.Key<String> IDENTITY = Context.key("meridian-identity");

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
      ServerCallHandler<Q, R> next) {
    String peer = format(call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
    String identity = Identities.of(call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION));
    return Contexts.interceptCall(Context.current().withValue(KEY, peer)
        .withValue(IDENTITY, identity), call, headers, next);
  }

  /** The current call's verified identity, or null (plaintext, or no usable certificate). */
  static String identity() {
    return IDENTITY.get();
  }

  /** The current call's peer, or {@code "unknown"} outside a call (in-process tests). */
  static String current() {
    String p = KEY.get();
    return p == null ? "unknown" : p;
  }

  static String format(SocketAddress address) {
    if (address instanceof InetSocketAddress a) {
      String host = a.getAddress() != null ? a.getAddress().getHostAddress() : a.getHostString();
      return (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort();
    }
    return address == null ? "unknown" : address.toString();
  }
}
