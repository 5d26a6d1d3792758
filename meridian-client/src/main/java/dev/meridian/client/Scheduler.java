package dev.meridian.client;

import java.time.Duration;

/**
 * Time as a value (DESIGN "Time"): the client reads the clock and sets timers only through this,
 * so tests drive does-not-exist timers, TTLs and backoff with a fake.
 */
public interface Scheduler {
  /** Monotonic time in nanoseconds. */
  long nanoTime();

  /** Runs {@code task} once after {@code delay} (on any thread). */
  Cancellable schedule(Runnable task, Duration delay);

  /** A pending timer. */
  interface Cancellable {
    void cancel();

    boolean isPending();
  }
}
