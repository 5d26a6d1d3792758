package dev.meridian.internal.server;

import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * At most {@code max} xDS calls open at once across a server ({@code --max-streams}): one more is
 * closed RESOURCE_EXHAUSTED before a handler exists, so the open ones notice nothing and the
 * client retries with backoff, or goes to another replica.
 */
final class StreamCap implements ServerInterceptor {
  private final int max;
  private final AtomicInteger open = new AtomicInteger();
  private final Metrics metrics;

  StreamCap(int max, Metrics metrics) {
    this.max = max;
    this.metrics = metrics;
  }

  int open() {
    return open.get();
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
      ServerCallHandler<Q, R> next) {
    if (open.incrementAndGet() > max) {
      open.decrementAndGet();
      metrics.boundRefused("max_streams");
      call.close(Status.RESOURCE_EXHAUSTED.withDescription("this server holds its maximum of "
          + max + " streams; retry, or use another replica"), new Metadata());
      return new ServerCall.Listener<>() {};
    }
    return CountedCalls.start(call, headers, next, open::decrementAndGet);
  }
}
