package dev.meridian.internal.server;

import com.sun.net.httpserver.HttpHandler;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The executor of one JDK HTTP server (admin or REST-JSON port), bounded for hostile clients.
 *
 * <p>The JDK server reads a request's line and headers on its executor's thread, blocking, so a
 * client sending them byte by byte (slowloris) holds a thread. Its own remedy, the
 * {@code sun.net.httpserver.maxReqTime} family, is JVM-global system properties read once: setting
 * them would change the embedding application's own HTTP servers, and would do nothing if one had
 * started first. So the limits are enforced here: {@code threads} threads, {@code queue} waiting
 * exchanges (beyond, the JDK closes the new connection), and a watchdog that interrupts a thread
 * still reading its request after the request timeout (or writing its response six times that):
 * the interrupt closes the blocking channel, the JDK closes the connection, the thread is free.
 */
final class HttpExecutor implements Executor, AutoCloseable {
  /** A response has this many request timeouts to be computed and written. */
  static final int RESPONSE_TIMEOUTS = 6;

  private final ThreadPoolExecutor pool;
  private final ScheduledExecutorService watchdog;
  private final Set<Exchange> running = ConcurrentHashMap.newKeySet();
  /** The exchange each of this executor's threads runs. */
  private final ThreadLocal<Exchange> current = new ThreadLocal<>();
  private final long readNanos;
  /** Told the bound that stopped a client: {@code http_queue}, {@code http_request_timeout}. */
  private final Consumer<String> refused;

  HttpExecutor(String name, int threads, int queue, Duration requestTimeout,
      Consumer<String> refused) {
    this.readNanos = requestTimeout.toNanos();
    this.refused = refused == null ? bound -> { } : refused;
    BlockingQueue<Runnable> waiting = queue == 0 ? new SynchronousQueue<>()
        : new ArrayBlockingQueue<>(queue);
    pool = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS, waiting,
        dev.meridian.internal.config.CoreThreads.factory(name));
    pool.allowCoreThreadTimeOut(true); // idle ports hold no threads
    watchdog = dev.meridian.internal.config.CoreThreads.scheduler(name + "-watchdog");
    long tick = Math.max(10, Math.min(250, requestTimeout.toMillis() / 4));
    watchdog.scheduleWithFixedDelay(this::cutLate, tick, tick, TimeUnit.MILLISECONDS);
  }

  /** @param metrics where refusals are counted; null: nowhere */
  HttpExecutor(String name, Bounds bounds, Metrics metrics) {
    this(name, bounds.httpThreads(), bounds.httpQueue(), bounds.httpRequestTimeout(),
        metrics == null ? null : metrics::boundRefused);
  }

  /** Throws RejectedExecutionException when threads and queue are full: the JDK closes. */
  @Override
  public void execute(Runnable exchange) {
    try {
      pool.execute(() -> run(exchange));
    } catch (RejectedExecutionException e) {
      if (!pool.isShutdown()) {
        refused.accept("http_queue");
      }
      throw e;
    }
  }

  private void run(Runnable exchange) {
    Exchange e = new Exchange(Thread.currentThread(), System.nanoTime() + readNanos);
    running.add(e);
    current.set(e);
    try {
      exchange.run();
    } finally {
      e.end();
      current.remove();
      running.remove(e);
      Thread.interrupted(); // a cut that raced with the end must not reach the next exchange
    }
  }

  /**
   * The current exchange has read its request: from now on its response has
   * {@link #RESPONSE_TIMEOUTS} request timeouts. No-op on a thread not of this executor.
   */
  void requestRead() {
    Exchange e = current.get();
    if (e != null) {
      e.requestRead();
    }
  }

  /** {@code h}, marking the request read when it is called (handlers that read no body). */
  HttpHandler handler(HttpHandler h) {
    return ex -> {
      requestRead();
      h.handle(ex);
    };
  }

  private void cutLate() {
    long now = System.nanoTime();
    for (Exchange e : running) {
      e.cutIfLate(now);
    }
  }

  /** One exchange on its thread: its deadline, and whether it ended. */
  private final class Exchange {
    private final Thread thread;
    private long deadline;
    private boolean reading = true;
    private boolean ended;

    Exchange(Thread thread, long deadline) {
      this.thread = thread;
      this.deadline = deadline;
    }

    synchronized void requestRead() {
      if (reading) {
        reading = false;
        deadline = System.nanoTime() + readNanos * RESPONSE_TIMEOUTS;
      }
    }

    synchronized void cutIfLate(long now) {
      if (!ended && now - deadline > 0) {
        ended = true;
        refused.accept("http_request_timeout");
        thread.interrupt(); // closes the channel it blocks on (InterruptibleChannel)
      }
    }

    synchronized void end() {
      ended = true;
    }
  }

  @Override
  public void close() {
    watchdog.shutdownNow();
    pool.shutdownNow();
  }
}
