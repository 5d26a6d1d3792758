package dev.meridian.client;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;

/**
 * Serializes user callbacks over the user's executor: one at a time, in order, never on the
 * client's context or a gRPC thread, so a watcher that blocks or calls back into the client cannot
 * deadlock it.
 */
final class CallbackExecutor implements Executor {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger("dev.meridian.client");

  private final Executor delegate;
  private final ArrayDeque<Runnable> queue = new ArrayDeque<>();
  private boolean running;

  CallbackExecutor(Executor delegate) {
    this.delegate = delegate;
  }

  @Override
  public void execute(Runnable task) {
    synchronized (queue) {
      queue.add(task);
      if (running) {
        return;
      }
      running = true;
    }
    try {
      delegate.execute(this::drain);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // The client is closing and its callback thread is gone: nobody is listening any more.
      synchronized (queue) {
        queue.clear();
        running = false;
      }
    }
  }

  private void drain() {
    while (true) {
      Runnable r;
      synchronized (queue) {
        r = queue.poll();
        if (r == null) {
          running = false;
          return;
        }
      }
      try {
        r.run();
      } catch (Throwable t) {
        LOG.warn("xDS watcher threw", t);
      }
    }
  }
}
