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
 * 20), available to stream handlers through the gRPC Context. A call whose certificate proves no
 * single identity (two URI SANs, {@link Identities}) is refused UNAUTHENTICATED, saying why, and
 * logged ({@code certificate_refused}, once a minute per certificate and peer address).
 */
final class PeerAddress implements ServerInterceptor {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger("dev.meridian.server");
  static final Context.Key<String> KEY = Context.key("meridian-peer");
  static final Context.Key<String> IDENTITY = Context.key("meridian-identity");
  private final LogGate refusals;

  PeerAddress(java.time.Clock clock) {
    this.refusals = new LogGate(clock, java.time.Duration.ofMinutes(1));
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
      ServerCallHandler<Q, R> next) {
    java.net.SocketAddress remote = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
    String peer = format(remote);
    Identities.Proof proof = Identities.of(call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION));
    if (proof.refusal() != null) {
      refused(proof.refusal(), host(remote), peer, call.getMethodDescriptor().getFullMethodName());
      call.close(io.grpc.Status.UNAUTHENTICATED.withDescription(proof.refusal()
          + ": this server will not choose among them, no stream is opened"), new Metadata());
      return new ServerCall.Listener<>() {};
    }
    return Contexts.interceptCall(Context.current().withValue(KEY, peer)
        .withValue(IDENTITY, proof.identity()), call, headers, next);
  }

  /** Logs a certificate refused on {@code where} (a method, a REST path), rate-limited. */
  void refused(String why, String host, String peer, String where) {
    if (refusals.open(host + " " + why)) {
      LOG.warn(dev.meridian.internal.protocol.LogLine.of("certificate_refused").kv("peer", peer)
          .kv("call", where).kv("reason", why).toString());
    }
  }

  /**
   * The peer the per-peer quotas count against: its verified identity under mTLS, else its IP
   * address (without the port: one client's connections come from many).
   */
  static String quotaKey(String identity, java.net.SocketAddress remote) {
    return identity != null ? "identity " + identity : "address " + host(remote);
  }

  static String host(java.net.SocketAddress address) {
    return address instanceof InetSocketAddress a && a.getAddress() != null
        ? a.getAddress().getHostAddress() : String.valueOf(address);
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
