package dev.meridian.server;

import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.ServerChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * The gRPC server's own Netty event loops (epoll where Netty has it, as gRPC picks by default),
 * owned so that streams can run on them ({@link EventLoopStreams}) and closed with the server.
 */
record Transport(EventLoopGroup boss, EventLoopGroup workers,
    Class<? extends ServerChannel> channelType) {

  static Transport create() {
    // Netty's default worker count (twice the cores): stream work now shares these threads.
    int workers = 2 * Runtime.getRuntime().availableProcessors();
    if (Epoll.isAvailable()) {
      return new Transport(new EpollEventLoopGroup(1, new DefaultThreadFactory("meridian-accept", true)),
          new EpollEventLoopGroup(workers, new DefaultThreadFactory("meridian-io", true)),
          EpollServerSocketChannel.class);
    }
    return new Transport(new NioEventLoopGroup(1, new DefaultThreadFactory("meridian-accept", true)),
        new NioEventLoopGroup(workers, new DefaultThreadFactory("meridian-io", true)),
        NioServerSocketChannel.class);
  }

  void close() {
    boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    workers.shutdownGracefully(0, 1, TimeUnit.SECONDS);
  }
}
