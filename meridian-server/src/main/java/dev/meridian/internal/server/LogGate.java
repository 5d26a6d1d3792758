package dev.meridian.internal.server;

import java.time.Clock;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Lets a log line about a client's refusal through once per key and interval, so a client that
 * repeats the refused request cannot flood the log. The keys are bounded: past {@link #MAX_KEYS}
 * the memory is forgotten (a line may then be said once more, never endlessly).
 */
final class LogGate {
  static final int MAX_KEYS = 4096;
  private final Clock clock;
  private final long intervalMillis;
  private final ConcurrentHashMap<String, Long> said = new ConcurrentHashMap<>();

  LogGate(Clock clock, java.time.Duration interval) {
    this.clock = clock;
    this.intervalMillis = interval.toMillis();
  }

  /** Whether the line about {@code key} is to be logged now. */
  boolean open(String key) {
    long now = clock.millis();
    if (said.size() >= MAX_KEYS) {
      said.clear();
    }
    boolean[] open = {false};
    said.compute(key, (k, last) -> {
      if (last == null || now - last >= intervalMillis) {
        open[0] = true;
        return now;
      }
      return last;
    });
    return open[0];
  }
}
