package dev.meridian.server;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Runs tasks one at a time, in submission order, on a shared pool: each stream's state is only
 * touched from its own serial executor, so the protocol core needs no locks.
 */
final class SerialExecutor implements Executor {
  private static final System.Logger LOG = System.getLogger(SerialExecutor.class.getName());

  private final Executor pool;
  private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean running = new AtomicBoolean();

  SerialExecutor(Executor pool) {
    this.pool = pool;
  }

  @Override
  public void execute(Runnable task) {
    tasks.add(task);
    schedule();
  }

  private void schedule() {
    if (running.compareAndSet(false, true)) {
      try {
        pool.execute(this::drain);
      } catch (RejectedExecutionException e) {
        // The server is shutting down: the stream's remaining work no longer matters.
        tasks.clear();
        running.set(false);
      }
    }
  }

  private void drain() {
    try {
      Runnable r;
      while ((r = tasks.poll()) != null) {
        try {
          r.run();
        } catch (RuntimeException e) {
          LOG.log(System.Logger.Level.ERROR, "stream task failed", e);
        }
      }
    } finally {
      running.set(false);
    }
    if (!tasks.isEmpty()) {
      schedule();
    }
  }
}
