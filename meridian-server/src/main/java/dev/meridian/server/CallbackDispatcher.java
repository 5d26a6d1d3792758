package dev.meridian.server;

import com.google.protobuf.Message;
import dev.meridian.internal.protocol.LogLine;
import dev.meridian.internal.protocol.Nack;
import dev.meridian.xds.ResourceType;
import dev.meridian.internal.server.StreamEvents;
import dev.meridian.internal.server.StreamInfo;
import io.envoyproxy.envoy.config.core.v3.Node;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Hands stream events from the push path to the application's {@link DiscoveryCallbacks}: the
 * stream only enqueues (never blocks: a full queue drops the event); one thread of its own runs
 * the callbacks in order.
 */
final class CallbackDispatcher implements StreamEvents, AutoCloseable {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger("dev.meridian.server");
  private static final Runnable STOP = () -> {};

  private final DiscoveryCallbacks callbacks;
  private final BlockingQueue<Runnable> queue;
  private final AtomicLong dropped = new AtomicLong();
  private final Thread thread;

  CallbackDispatcher(DiscoveryCallbacks callbacks, int capacity) {
    this.callbacks = callbacks;
    this.queue = new ArrayBlockingQueue<>(capacity);
    this.thread = dev.meridian.internal.config.CoreThreads.thread(this::run, "meridian-callbacks");
    thread.start();
  }

  long dropped() {
    return dropped.get();
  }

  private void run() {
    while (true) {
      Runnable next;
      try {
        next = queue.take();
      } catch (InterruptedException e) {
        return;
      }
      if (next == STOP) {
        return;
      }
      try {
        next.run();
      } catch (RuntimeException e) {
        LOG.warn(LogLine.of("callback_failed")
            .kv("error", e.toString()).toString(), e);
      }
    }
  }

  private void offer(Runnable event) {
    if (!queue.offer(event)) {
      long n = dropped.incrementAndGet();
      if (n == 1 || n % 10_000 == 0) {
        LOG.warn(LogLine.of("callback_events_dropped")
            .kv("dropped", n).kv("queued", queue.size())
            .kv("why", "the callbacks are slower than the streams' events").toString());
      }
    }
  }

  private static StreamView view(StreamInfo s, Node node, String group) {
    return new StreamView(s.id(), node, group, s.peer(), s.identity(),
        StreamInfo.DELTA.equals(s.variant()), s.service(), s.connectedSince());
  }

  @Override
  public void opened(StreamInfo stream, Node node, String group) {
    StreamView v = view(stream, node, group);
    offer(() -> callbacks.onStreamOpened(v));
  }

  @Override
  public void request(StreamInfo stream, Node node, String group, Message request) {
    StreamView v = view(stream, node, group);
    offer(() -> callbacks.onRequest(v, request));
  }

  @Override
  public void sent(StreamInfo stream, Node node, String group, ResourceType type,
      Message response) {
    StreamView v = view(stream, node, group);
    offer(() -> callbacks.onResponse(v, type.typeUrl(), response));
  }

  @Override
  public void acked(StreamInfo stream, Node node, String group, ResourceType type,
      String version) {
    StreamView v = view(stream, node, group);
    offer(() -> callbacks.onAck(v, type.typeUrl(), version));
  }

  @Override
  public void nacked(StreamInfo stream, Node node, String group, Nack nack) {
    StreamView v = view(stream, node, group);
    com.google.rpc.Status error = com.google.rpc.Status.newBuilder().setCode(nack.code())
        .setMessage(nack.message()).build();
    offer(() -> callbacks.onNack(v, nack.type().typeUrl(), nack.rejectedVersion(), error));
  }

  @Override
  public void closed(StreamInfo stream, Node node, String group, String reason) {
    StreamView v = view(stream, node, group);
    offer(() -> callbacks.onStreamClosed(v, reason));
  }

  /** Delivers what is queued (up to {@code wait}), then stops the thread. */
  void close(java.time.Duration wait) {
    boolean queued = queue.offer(STOP);
    try {
      if (!queued || !joined(wait)) {
        thread.interrupt();
      }
    } catch (InterruptedException e) {
      thread.interrupt();
      Thread.currentThread().interrupt();
    }
  }

  private boolean joined(java.time.Duration wait) throws InterruptedException {
    thread.join(TimeUnit.NANOSECONDS.toMillis(wait.toNanos()) + 1);
    return !thread.isAlive();
  }

  @Override
  public void close() {
    close(java.time.Duration.ofSeconds(5));
  }
}
