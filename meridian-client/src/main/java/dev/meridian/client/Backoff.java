package dev.meridian.client;

import java.time.Duration;
import java.util.function.DoubleSupplier;

/**
 * Exponential backoff with jitter for reconnecting (gRPC's connection-backoff.md: initial 1 s,
 * multiplier 1.6, jitter 0.2, max 120 s; we cap at 30 s like grpc-java's xDS client). The random
 * source is injected so tests are deterministic.
 */
final class Backoff {
  private final Duration initial;
  private final Duration max;
  private final double multiplier;
  private final double jitter;
  private final DoubleSupplier random;
  private double nextNanos;

  public Backoff(Duration initial, Duration max, double multiplier, double jitter,
      DoubleSupplier random) {
    this.initial = initial;
    this.max = max;
    this.multiplier = multiplier;
    this.jitter = jitter;
    this.random = random;
    reset();
  }

  public static Backoff standard(DoubleSupplier random) {
    return new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(30), 1.6, 0.2, random);
  }

  /** The delay before the next attempt: the current step, spread by +-jitter, then grown. */
  public Duration next() {
    double current = nextNanos;
    nextNanos = Math.min(current * multiplier, max.toNanos());
    double spread = current * jitter * (random.getAsDouble() * 2 - 1);
    return Duration.ofNanos((long) Math.max(0, current + spread));
  }

  /** After a stream that got a response: start again from the initial delay. */
  public void reset() {
    nextNanos = initial.toNanos();
  }
}
