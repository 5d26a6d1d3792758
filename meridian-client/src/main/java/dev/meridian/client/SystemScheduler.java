package dev.meridian.client;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/** The real clock: one daemon timer thread; tasks only hop onto the client's context. */
final class SystemScheduler implements Scheduler, AutoCloseable {
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "meridian-xds-timer");
    t.setDaemon(true);
    return t;
  });

  @Override
  public long nanoTime() {
    return System.nanoTime();
  }

  @Override
  public Cancellable schedule(Runnable task, Duration delay) {
    ScheduledFuture<?> f;
    try {
      f = timer.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // Closed: the client is closing, and a stream that ends meanwhile (the server's last
      // words arrive on a gRPC thread) schedules a reconnect nobody wants.
      return new Cancellable() {
        @Override
        public void cancel() {}

        @Override
        public boolean isPending() {
          return false;
        }
      };
    }
    return new Cancellable() {
      @Override
      public void cancel() {
        f.cancel(false);
      }

      @Override
      public boolean isPending() {
        return !f.isDone();
      }
    };
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
