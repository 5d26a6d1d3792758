package dev.meridian.server;

import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.util.concurrent.EventExecutor;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;

/**
 * Runs each xDS stream's work on the Netty event loop that carries its connection, when the stream
 * is created there (gRPC callbacks run on the transport threads: {@code directExecutor}).
 *
 * <p>Why: an event loop is itself a serial executor, so it keeps the one-thread-per-stream rule
 * the protocol core relies on, and it removes two thread hand-offs per message: an ACK is handled
 * where it was decoded, and a push is written where it was built (no wake-up of the loop to flush).
 * At 10,000 streams those hand-offs, each a park/unpark pair, were most of a push's cost. Streams
 * created elsewhere (in-process transports in tests, say) get a {@link SerialExecutor} on the pool.
 */
final class EventLoopStreams implements Supplier<Executor> {
  private static final System.Logger LOG = System.getLogger(EventLoopStreams.class.getName());

  private final EventLoopGroup loops;
  private final Executor pool;

  EventLoopStreams(EventLoopGroup loops, Executor pool) {
    this.loops = loops;
    this.pool = pool;
  }

  @Override
  public Executor get() {
    for (EventExecutor loop : loops) {
      if (loop.inEventLoop()) {
        return new OnLoop(loop);
      }
    }
    return new SerialExecutor(pool);
  }

  /** A stream's tasks on its loop, with {@link SerialExecutor}'s handling of failures. */
  private record OnLoop(EventExecutor loop) implements Executor {
    @Override
    public void execute(Runnable task) {
      try {
        loop.execute(() -> {
          try {
            task.run();
          } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "stream task failed", e);
          }
        });
      } catch (RejectedExecutionException e) {
        // The server is shutting down: the stream's remaining work no longer matters.
      }
    }
  }
}
