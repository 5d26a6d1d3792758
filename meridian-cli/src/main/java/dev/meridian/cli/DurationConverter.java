package dev.meridian.cli;

import java.time.Duration;
import picocli.CommandLine;

/** Durations on the command line: {@code 500ms}, {@code 30s}, {@code 5m}, {@code 2h}, or ISO-8601. */
final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
  @Override
  public Duration convert(String value) {
    return parse(value);
  }

  static Duration parse(String value) {
    try {
      return Durations.parse(value);
    } catch (IllegalArgumentException e) {
      throw new CommandLine.TypeConversionException(
          "'" + value + "' is not a duration: use e.g. 500ms, 30s, 5m or 2h");
    }
  }
}
