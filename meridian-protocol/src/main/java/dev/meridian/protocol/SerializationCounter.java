package dev.meridian.protocol;

import java.util.concurrent.atomic.LongAdder;

/** Counts resource serializations, so tests can prove each version is serialized once. */
public final class SerializationCounter {
  private static final LongAdder COUNT = new LongAdder();

  private SerializationCounter() {}

  static void increment() {
    COUNT.increment();
  }

  public static long count() {
    return COUNT.sum();
  }
}
