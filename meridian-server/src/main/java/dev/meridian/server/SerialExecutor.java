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

  /**
   * Runs {@code task} on the calling thread when this executor is idle, with nothing queued (no
   * hand-off to the pool); otherwise queues it like {@link #execute}. Order is kept either way:
   * the task runs only when no earlier one is pending or running.
   */
  void runOrExecute(Runnable task) {
    if (!tasks.isEmpty() || !running.compareAndSet(false, true)) {
      execute(task);
      return;
    }
    try {
      runLogged(task);
    } finally {
      release();
    }
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
        runLogged(r);
      }
    } finally {
      release();
    }
  }

  /** Lets the next task in; what arrived while this executor was busy goes to the pool. */
  private void release() {
    running.set(false);
    if (!tasks.isEmpty()) {
      schedule();
    }
  }

  private static void runLogged(Runnable task) {
    try {
      task.run();
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.ERROR, "stream task failed", e);
    }
  }
}
