package dev.meridian.cli;

import picocli.CommandLine;

/**
 * A {@code --server HOST:PORT} value. Checked when parsed: without a port, gRPC would pick one
 * itself and fail later with a vague {@code UNAVAILABLE io exception} (issue 18).
 */
record HostPort(String host, int port) {
  static HostPort parse(String s) {
    String t = s.trim();
    // A bracketed IPv6 host ends at its ']': only a ':' after it can start the port.
    int close = t.startsWith("[") ? t.indexOf(']') : -1;
    int colon = t.lastIndexOf(':');
    if (close > 0 && colon < close) {
      colon = -1; // "[::1]": no port
    }
    String host = colon < 0 ? t : t.substring(0, colon);
    String port = colon < 0 ? "" : t.substring(colon + 1);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    } else if (host.contains(":")) {
      throw new IllegalArgumentException("'" + s + "': put an IPv6 address in brackets, e.g. [::1]:18000");
    }
    if (host.isEmpty() || port.isEmpty()) {
      throw new IllegalArgumentException("needs HOST:PORT (e.g. 127.0.0.1:18000), not '" + s + "'");
    }
    int p;
    try {
      p = Integer.parseInt(port);
    } catch (NumberFormatException e) {
      p = -1;
    }
    if (p < 1 || p > 65535) {
      throw new IllegalArgumentException("'" + port + "' in '" + s + "' is not a port (1-65535)");
    }
    return new HostPort(host, p);
  }

  /** HOST:PORT, with an IPv6 host in brackets: a gRPC target and what the user typed. */
  @Override
  public String toString() {
    return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
  }

  static final class Converter implements CommandLine.ITypeConverter<HostPort> {
    @Override
    public HostPort convert(String value) {
      try {
        return parse(value);
      } catch (IllegalArgumentException e) {
        throw new CommandLine.TypeConversionException(e.getMessage());
      }
    }
  }
}
