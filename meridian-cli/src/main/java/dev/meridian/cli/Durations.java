package dev.meridian.cli;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses durations as users write them: 500ms, 5s, 2m, 1h (or ISO-8601 like PT5S). */
final class Durations {
  private static final Pattern SIMPLE = Pattern.compile("(\\d+)(ms|s|m|h)");

  private Durations() {}

  static Duration parse(String text) {
    String s = text.trim();
    Matcher m = SIMPLE.matcher(s);
    if (m.matches()) {
      long n = Long.parseLong(m.group(1));
      Duration d = switch (m.group(2)) {
        case "ms" -> Duration.ofMillis(n);
        case "s" -> Duration.ofSeconds(n);
        case "m" -> Duration.ofMinutes(n);
        default -> Duration.ofHours(n);
      };
      if (d.isZero()) {
        throw new IllegalArgumentException("duration must be positive: " + text);
      }
      return d;
    }
    try {
      return Duration.parse(s);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("invalid duration '" + text + "' (use e.g. 500ms, 5s, 2m)");
    }
  }
}
