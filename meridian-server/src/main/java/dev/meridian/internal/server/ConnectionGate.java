package dev.meridian.internal.server;

import io.grpc.Attributes;
import io.grpc.Grpc;
import io.grpc.ServerTransportFilter;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandler;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.ChannelInboundHandlerAdapter;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslHandler;
import java.net.SocketAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The xDS port's connections, counted from the moment they are accepted, before any handshake:
 * beyond {@code --max-connections} in all, or {@code --max-connections-per-peer} of one peer, a
 * new connection is closed at once, so that a flood of idle sockets cannot take the file
 * descriptors a config reload, etcd or the admin port need. A peer is its IP address; under mTLS
 * it is its verified identity, known only once the TLS handshake is done, and a connection over
 * its identity's quota is closed then.
 */
final class ConnectionGate {
  /** Each transport's {@link Connection}, for the stream tracers of its calls. */
  static final Attributes.Key<Connection> CONNECTION = Attributes.Key.create("meridian-connection");

  private final int max;
  private final boolean perIdentity;
  private final Metrics metrics;
  private final AtomicInteger open = new AtomicInteger();
  private final PeerCounts peers;
  private final LogGate refusals = new LogGate(java.time.Clock.systemUTC(),
      java.time.Duration.ofMinutes(1));
  private final HandshakeFailures handshakes;
  /** Open connections by remote address (unique: an address and a port), for transportReady. */
  private final ConcurrentHashMap<SocketAddress, Connection> byRemote = new ConcurrentHashMap<>();

  /**
   * @param perIdentity mTLS: connections are counted per verified identity, not per address (many
   *     workloads may share one address behind a NAT)
   */
  ConnectionGate(int max, int perPeer, boolean perIdentity, Metrics metrics) {
    this.max = max;
    this.peers = new PeerCounts(perPeer);
    this.perIdentity = perIdentity;
    this.metrics = metrics;
    this.handshakes = new HandshakeFailures(java.time.Clock.systemUTC(), metrics);
  }

  /** One open connection: its channel, the peer it counts against, its partial message bytes. */
  static final class Connection {
    final Channel channel;
    final AtomicLong partialBytes = new AtomicLong();
    private volatile String peer;
    private final AtomicBoolean released = new AtomicBoolean();

    Connection(Channel channel) {
      this.channel = channel;
    }

    /**
     * Closes the connection now: from the head of its pipeline, since a close through grpc-java's
     * HTTP/2 handler sends GOAWAY and then waits for its streams, which a stalled one never ends.
     */
    void closeNow() {
      ChannelHandlerContext first = channel.pipeline().context(FIRST);
      if (first != null) {
        first.close();
      } else {
        channel.close();
      }
    }
  }

  /**
   * First in each connection's pipeline: where closeNow starts, and where a closed connection's
   * TLS handshake is looked at (the TLS handler, further in, keeps its outcome).
   */
  private static final String FIRST = "meridian-connection";

  @ChannelHandler.Sharable
  private final class First extends ChannelInboundHandlerAdapter {
    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
      SslHandler ssl = ctx.pipeline().get(SslHandler.class);
      if (ssl != null) {
        // Done, or failed as soon as the TLS handler hears of the close, after this handler.
        SocketAddress remote = ctx.channel().remoteAddress();
        ssl.handshakeFuture().addListener(f -> {
          if (!f.isSuccess()) {
            handshakes.failed(remote, f.cause());
          }
        });
      }
      super.channelInactive(ctx);
    }
  }

  private final First firstHandler = new First();

  int open() {
    return open.get();
  }

  /** Goes first in the server channel's pipeline: it sees each accepted channel. */
  ChannelHandler acceptHandler() {
    return new Accept();
  }

  @ChannelHandler.Sharable
  private final class Accept extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      Channel child = (Channel) msg;
      if (!admit(child)) {
        // Not registered yet: closed as Netty's own acceptor closes a child it cannot register.
        child.unsafe().closeForcibly();
        return;
      }
      ctx.fireChannelRead(msg);
    }
  }

  private boolean admit(Channel child) {
    if (open.incrementAndGet() > max) {
      open.decrementAndGet();
      metrics.boundRefused("max_connections");
      return false;
    }
    Connection c = new Connection(child);
    if (!perIdentity && !take(c, PeerAddress.quotaKey(null, child.remoteAddress()))) {
      open.decrementAndGet();
      metrics.boundRefused("max_connections_per_peer");
      return false;
    }
    SocketAddress remote = child.remoteAddress();
    if (remote != null) {
      byRemote.put(remote, c);
    }
    child.pipeline().addFirst(FIRST, firstHandler);
    child.closeFuture().addListener(f -> release(c, remote));
    return true;
  }

  /** Counts {@code c} against {@code peer}; false (and not counted) when the peer is full. */
  private boolean take(Connection c, String peer) {
    if (!peers.take(peer)) {
      PeerStreamQuota.logRefused(refusals, peer, "max_connections_per_peer", peers.max());
      return false;
    }
    c.peer = peer;
    return true;
  }

  private void release(Connection c, SocketAddress remote) {
    if (!c.released.compareAndSet(false, true)) {
      return;
    }
    if (remote != null) {
      byRemote.remove(remote, c);
    }
    String peer = c.peer;
    if (peer != null) {
      peers.giveBack(peer);
    }
    open.decrementAndGet();
  }

  /**
   * Tags each transport with its {@link Connection} once its handshake is done; under mTLS,
   * counts it against its identity (or its address, without a usable certificate identity) and
   * closes it beyond that peer's quota.
   */
  ServerTransportFilter transportFilter() {
    return new ServerTransportFilter() {
      @Override
      public Attributes transportReady(Attributes attrs) {
        Connection c = byRemote.get(attrs.get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
        if (c == null || c.released.get()) {
          return attrs; // closed meanwhile (its close and this run on its event loop, in turn)
        }
        if (perIdentity) {
          String identity =
              Identities.of(attrs.get(Grpc.TRANSPORT_ATTR_SSL_SESSION)).identity();
          String peer = PeerAddress.quotaKey(identity,
              attrs.get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
          if (!take(c, peer)) {
            metrics.boundRefused("max_connections_per_peer");
            c.closeNow();
          }
        }
        return attrs.toBuilder().set(CONNECTION, c).build();
      }
    };
  }
}
