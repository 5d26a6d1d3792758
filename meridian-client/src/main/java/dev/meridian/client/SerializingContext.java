package dev.meridian.client;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs tasks one at a time, in submission order, on whichever thread submits while no other thread
 * is draining (the model is gRPC's SynchronizationContext). All client state is touched only here,
 * so the state needs no locks; user callbacks never run here.
 */
final class SerializingContext implements Executor {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger("dev.meridian.client");

  private final Queue<Runnable> queue = new ConcurrentLinkedQueue<>();
  private final AtomicReference<Thread> drainer = new AtomicReference<>();

  @Override
  public void execute(Runnable task) {
    queue.add(task);
    drain();
  }

  private void drain() {
    do {
      if (!drainer.compareAndSet(null, Thread.currentThread())) {
        return; // the draining thread (maybe this one, re-entrantly) will run it
      }
      try {
        Runnable r;
        while ((r = queue.poll()) != null) {
          try {
            r.run();
          } catch (Throwable t) {
            LOG.error("uncaught exception in the xDS client context", t);
          }
        }
      } finally {
        drainer.set(null);
      }
    } while (!queue.isEmpty());
  }

  /**
   * Fails unless the caller is a task of this context. Every method that touches client state
   * calls it first (as grpc-java's throwIfNotInThisSynchronizationContext): a wrong-thread call is
   * a bug that would otherwise race silently. One volatile read.
   */
  void throwIfNotInThisContext() {
    if (drainer.get() != Thread.currentThread()) {
      throw new IllegalStateException("not called from the xDS client's context (thread "
          + Thread.currentThread().getName() + ")");
    }
  }
}
