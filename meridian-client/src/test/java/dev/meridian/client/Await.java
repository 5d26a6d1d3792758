package dev.meridian.client;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Waits for a condition, with a bound (never a bare sleep). */
final class Await {
  private Await() {}

  static void until(String what, BooleanSupplier condition) {
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within 20 s: " + what);
      }
      LockSupport.parkNanos(Duration.ofMillis(5).toNanos());
    }
  }
}
