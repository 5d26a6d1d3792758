package dev.meridian.internal.server;

import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;

/**
 * At most {@code --max-streams-per-peer} xDS calls open at once of one peer: its verified identity
 * under mTLS, else its IP address (whatever its connections). One more is closed
 * RESOURCE_EXHAUSTED before a handler exists, so one client cannot take every place
 * {@code --max-streams} gives and leave none for a client that connects later.
 */
final class PeerStreamQuota implements ServerInterceptor {
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger("dev.meridian.server");
  private final PeerCounts peers;
  private final Metrics metrics;
  private final LogGate refusals = new LogGate(java.time.Clock.systemUTC(),
      java.time.Duration.ofMinutes(1));

  PeerStreamQuota(int perPeer, Metrics metrics) {
    this.peers = new PeerCounts(perPeer);
    this.metrics = metrics;
  }

  /** One line a minute per peer and bound: the operator sees who is refused, not a flood. */
  static void logRefused(LogGate gate, String peer, String bound, int max) {
    if (gate.open(peer + " " + bound)) {
      LOG.warn(dev.meridian.internal.protocol.LogLine.of("peer_quota")
          .kv("peer", dev.meridian.internal.protocol.ClientText.clip(peer)).kv("bound", bound)
          .kv("max", max).toString());
    }
  }

  /** The streams {@code peer} (as {@link #peerOf} names it) holds now. */
  int held(String peer) {
    return peers.held(peer);
  }

  static String peerOf(ServerCall<?, ?> call) {
    String identity = Identities.of(call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION))
        .identity();
    return PeerAddress.quotaKey(identity,
        call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
      ServerCallHandler<Q, R> next) {
    String peer = peerOf(call);
    if (!peers.take(peer)) {
      metrics.boundRefused("max_streams_per_peer");
      logRefused(refusals, peer, "max_streams_per_peer", peers.max());
      call.close(Status.RESOURCE_EXHAUSTED.withDescription("this peer (" + peer + ") holds its "
          + "maximum of " + peers.max() + " streams on this server; retry, or use another "
          + "replica"), new Metadata());
      return new ServerCall.Listener<>() {};
    }
    return CountedCalls.start(call, headers, next, () -> peers.giveBack(peer));
  }
}
