package dev.meridian.cli;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/**
 * Byte counts on the command line: {@code 268435456}, or with a binary unit, {@code 512KiB},
 * {@code 256MiB}, {@code 1GiB} (also {@code K}, {@code M}, {@code G}, as powers of 1024). Up to
 * gRPC's own bound of a message, 2 GiB less a byte.
 */
final class ByteSize implements CommandLine.ITypeConverter<Integer> {
  private static final Pattern SIZE = Pattern.compile("(\\d+)\\s*([kmg]i?b?|b)?");

  @Override
  public Integer convert(String value) {
    Matcher m = SIZE.matcher(value.trim().toLowerCase(Locale.ROOT));
    if (!m.matches()) {
      throw invalid(value);
    }
    long shift = switch (m.group(2) == null ? "" : m.group(2).substring(0, 1)) {
      case "k" -> 10;
      case "m" -> 20;
      case "g" -> 30;
      default -> 0;
    };
    try {
      long n = Long.parseLong(m.group(1));
      if (n <= 0 || n > (Integer.MAX_VALUE >> shift) + 1L) {
        throw invalid(value);
      }
      return (int) Math.min(Integer.MAX_VALUE, n << shift);
    } catch (NumberFormatException e) {
      throw invalid(value);
    }
  }

  private static CommandLine.TypeConversionException invalid(String value) {
    return new CommandLine.TypeConversionException("'" + value + "' is not a size in bytes "
        + "from 1 to 2GiB: use e.g. 268435456, 64MiB or 1GiB");
  }

  /** {@code 256MiB} for an exact number of MiB, else the bytes. */
  static String format(long bytes) {
    if (bytes >= 1 << 20 && bytes % (1 << 20) == 0) {
      return (bytes >> 20) + "MiB";
    }
    if (bytes >= 1 << 10 && bytes % (1 << 10) == 0) {
      return (bytes >> 10) + "KiB";
    }
    return Long.toString(bytes);
  }
}
