package dev.meridian.internal.protocol;

import com.google.protobuf.Duration;

/**
 * How often a resource with a TTL is heartbeated to a client that holds it (spec "TTL"): often
 * enough that a connected client never lets a live resource expire.
 */
@FunctionalInterface
public interface HeartbeatPolicy {
  /** The longest a client may go without hearing about a resource with this TTL. */
  java.time.Duration interval(Duration ttl);

  /** A fraction of the TTL: a third leaves room for two lost or late heartbeats. */
  static HeartbeatPolicy fractionOfTtl(double fraction) {
    return ttl -> {
      long millis = ttl.getSeconds() * 1000 + ttl.getNanos() / 1_000_000;
      return java.time.Duration.ofMillis(Math.max(1, (long) (millis * fraction)));
    };
  }

  /** A fixed interval, but never longer than a third of the TTL. */
  static HeartbeatPolicy fixed(java.time.Duration interval) {
    HeartbeatPolicy cap = fractionOfTtl(1.0 / 3);
    return ttl -> {
      java.time.Duration max = cap.interval(ttl);
      return interval.compareTo(max) < 0 ? interval : max;
    };
  }

  HeartbeatPolicy DEFAULT = fractionOfTtl(1.0 / 3);
}
