package dev.meridian.e2e;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Bounded waiting on a condition: polls every 20 ms and fails with a description on timeout. */
final class Await {
  private Await() {}

  static void until(Duration timeout, String what, BooleanSupplier condition) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out after " + timeout + " waiting for: " + what);
      }
      pause();
    }
  }

  /** Waits until {@code supplier} yields a non-null value and returns it. */
  static <T> T value(Duration timeout, String what, Supplier<T> supplier) {
    long deadline = System.nanoTime() + timeout.toNanos();
    T v;
    while ((v = supplier.get()) == null) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out after " + timeout + " waiting for: " + what);
      }
      pause();
    }
    return v;
  }

  private static void pause() {
    try {
      Thread.sleep(20);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }
}
