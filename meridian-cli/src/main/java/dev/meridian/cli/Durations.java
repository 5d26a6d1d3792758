package dev.meridian.cli;

import java.time.Duration;

/** {@code 500ms}, {@code 10s} (or {@code 1.5s}), {@code 2m}, {@code 2h} or an ISO-8601 duration. */
final class Durations {
  private Durations() {}

  static Duration parse(String s) {
    String t = s.trim();
    try {
      if (t.endsWith("ms")) {
        return Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2)));
      } else if (t.endsWith("s")) {
        return Duration.ofMillis(Math.round(Double.parseDouble(t.substring(0, t.length() - 1)) * 1000));
      } else if (t.endsWith("m")) {
        return Duration.ofMinutes(Long.parseLong(t.substring(0, t.length() - 1)));
      } else if (t.endsWith("h")) {
        return Duration.ofHours(Long.parseLong(t.substring(0, t.length() - 1)));
      }
      return Duration.parse(t.toUpperCase(java.util.Locale.ROOT));
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("not a duration: " + s + " (try 500ms, 10s, 2m)");
    }
  }

  /** As typed on the command line: {@code 10s}, {@code 1500ms}. */
  static String format(Duration d) {
    return d.toMillis() % 1000 == 0 ? d.toSeconds() + "s" : d.toMillis() + "ms";
  }
}
