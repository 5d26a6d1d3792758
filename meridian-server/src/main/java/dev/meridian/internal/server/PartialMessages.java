package dev.meridian.internal.server;

import io.grpc.Metadata;
import io.grpc.ServerStreamTracer;
import io.grpc.Status;
import java.time.Clock;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Request messages received in part. grpc-java holds a message's bytes until its last one has
 * arrived, and returns them to HTTP/2 flow control meanwhile, so a client that declares a large
 * message and never finishes it holds that memory as long as its stream lives. This tracer (it
 * sees each message begin, each chunk of its body, and its end) bounds that: a message not
 * received in full within {@code --message-receive-timeout} of its first byte closes its
 * connection; the stream whose bytes would take a connection beyond
 * {@code --max-partial-bytes-per-connection}, or the server beyond {@code --max-partial-bytes},
 * fails RESOURCE_EXHAUSTED. Either way grpc-java releases what the stream held.
 */
final class PartialMessages extends ServerStreamTracer.Factory {
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger("dev.meridian.server");

  private final long maxPerServer;
  private final long maxPerConnection;
  private final long receiveTimeoutMillis;
  private final Clock clock;
  private final Metrics metrics;
  private final AtomicLong held = new AtomicLong();
  /** Streams with a message begun and not yet received in full. */
  private final Set<Tracer> receiving = ConcurrentHashMap.newKeySet();
  /** What this says of its refusals, once a minute per peer and bound (not grpc-java's trace). */
  private final LogGate refusals;
  /**
   * grpc-java's logger of a stream whose deframer failed: it logs each failure with its stack
   * trace, ours included. Held here, since java.util.logging keeps loggers only weakly.
   */
  private final java.util.logging.Logger deframeLog = java.util.logging.Logger.getLogger(
      "io.grpc.netty.shaded.io.grpc.netty.NettyServerStream");
  /** Marks this class's refusals in their description, for the filter on {@link #deframeLog}. */
  static final String MARK = "bytes of messages received in part";

  PartialMessages(long maxPerServer, long maxPerConnection, Duration receiveTimeout, Clock clock,
      Metrics metrics) {
    this.maxPerServer = maxPerServer;
    this.maxPerConnection = maxPerConnection;
    this.receiveTimeoutMillis = receiveTimeout.toMillis();
    this.clock = clock;
    this.metrics = metrics;
    this.refusals = new LogGate(clock, Duration.ofMinutes(1));
    // Each refusal would cost the log a 40-line stack trace: a flood a client could cause.
    java.util.logging.Filter before = deframeLog.getFilter();
    deframeLog.setFilter(r -> !isOurRefusal(r.getThrown())
        && (before == null || before.isLoggable(r)));
  }

  private static boolean isOurRefusal(Throwable t) {
    return t instanceof io.grpc.StatusRuntimeException e
        && e.getStatus().getCode() == Status.Code.RESOURCE_EXHAUSTED
        && e.getStatus().getDescription() != null
        && e.getStatus().getDescription().contains(MARK);
  }

  /** Bytes of messages received in part, across the server. */
  long held() {
    return held.get();
  }

  /**
   * Closes the connection of each message received for longer than the timeout; run often (a
   * fraction of the timeout), so that the cut comes soon after the deadline.
   */
  void expire() {
    long now = clock.millis();
    for (Tracer t : receiving) {
      t.expireIfBefore(now - receiveTimeoutMillis);
    }
  }

  @Override
  public ServerStreamTracer newServerStreamTracer(String fullMethodName, Metadata headers) {
    return new Tracer();
  }

  private final class Tracer extends ServerStreamTracer {
    private volatile ConnectionGate.Connection connection;
    /** Guarded by this: the bytes of the current message received so far, and when it began. */
    private long partial;
    private long beganMillis;
    private boolean inMessage;

    @Override
    public void serverCallStarted(ServerCallInfo<?, ?> callInfo) {
      connection = callInfo.getAttributes().get(ConnectionGate.CONNECTION);
    }

    @Override
    public void inboundMessage(int seqNo) {
      synchronized (this) {
        inMessage = true;
        beganMillis = clock.millis();
      }
      receiving.add(this);
    }

    @Override
    public void inboundWireSize(long bytes) {
      ConnectionGate.Connection c = connection;
      synchronized (this) {
        if (!inMessage) {
          return;
        }
        partial += bytes;
      }
      long onServer = held.addAndGet(bytes);
      long onConnection = c == null ? 0 : c.partialBytes.addAndGet(bytes);
      String crossed = onConnection > maxPerConnection ? "max_partial_bytes_per_connection"
          : onServer > maxPerServer ? "max_partial_bytes" : null;
      if (crossed != null) {
        release();
        metrics.boundRefused(crossed);
        String peer = c == null ? "unknown" : PeerAddress.format(c.channel.remoteAddress());
        if (refusals.open(peer + " " + crossed)) {
          LOG.warn(dev.meridian.internal.protocol.LogLine.of("partial_bytes_refused")
              .kv("peer", peer).kv("bound", crossed).toString());
        }
        // Thrown inside grpc-java's deframer: it fails this stream as it fails an oversized
        // message (RST_STREAM, RESOURCE_EXHAUSTED) and frees the bytes the stream held.
        throw Status.RESOURCE_EXHAUSTED.withDescription(crossed.equals("max_partial_bytes")
            ? "the server holds its maximum of " + maxPerServer + " " + MARK + "; retry"
            : "this connection holds its maximum of " + maxPerConnection + " " + MARK)
            .asRuntimeException();
      }
    }

    @Override
    public void inboundMessageRead(int seqNo, long wireSize, long uncompressedSize) {
      release();
    }

    @Override
    public void streamClosed(Status status) {
      release();
    }

    /** The current message is over (received, refused, or its stream closed): its bytes too. */
    private void release() {
      long bytes;
      synchronized (this) {
        bytes = partial;
        partial = 0;
        inMessage = false;
      }
      receiving.remove(this);
      if (bytes > 0) {
        held.addAndGet(-bytes);
        ConnectionGate.Connection c = connection;
        if (c != null) {
          c.partialBytes.addAndGet(-bytes);
        }
      }
    }

    void expireIfBefore(long cutoffMillis) {
      synchronized (this) {
        if (!inMessage || beganMillis > cutoffMillis) {
          return;
        }
      }
      ConnectionGate.Connection c = connection;
      metrics.boundRefused("message_receive_timeout");
      LOG.warn(dev.meridian.internal.protocol.LogLine.of("message_receive_timeout")
          .kv("peer", c == null ? "unknown" : PeerAddress.format(c.channel.remoteAddress()))
          .kv("timeout_ms", receiveTimeoutMillis)
          .kv("action", c == null ? "none: no connection known" : "connection closed").toString());
      release();
      if (c != null) {
        // The stream cannot be failed from outside its transport through grpc-java's public
        // API; closing its connection ends it, and every stream of it, with UNAVAILABLE.
        c.closeNow();
      }
    }
  }
}
