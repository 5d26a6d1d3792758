package dev.meridian.cli;

import java.time.Duration;
import java.util.Locale;
import picocli.CommandLine;

/** Durations on the command line: {@code 500ms}, {@code 30s}, {@code 5m}, {@code 2h}, or ISO-8601. */
final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
  @Override
  public Duration convert(String value) {
    return parse(value);
  }

  static Duration parse(String value) {
    String v = value.trim().toLowerCase(Locale.ROOT);
    try {
      if (v.startsWith("p")) {
        return Duration.parse(value.trim().toUpperCase(Locale.ROOT));
      }
      if (v.endsWith("ms")) {
        return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
      }
      long n = Long.parseLong(v.substring(0, v.length() - 1));
      return switch (v.charAt(v.length() - 1)) {
        case 's' -> Duration.ofSeconds(n);
        case 'm' -> Duration.ofMinutes(n);
        case 'h' -> Duration.ofHours(n);
        default -> throw new NumberFormatException();
      };
    } catch (RuntimeException e) {
      throw new CommandLine.TypeConversionException(
          "'" + value + "' is not a duration: use e.g. 500ms, 30s, 5m or 2h");
    }
  }
}
