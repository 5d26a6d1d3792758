package dev.meridian.internal.protocol;

/**
 * One structured log line: an event name then {@code key=value} pairs, values quoted when they hold
 * spaces, quotes or newlines, so that every event stays on one line and greps/parses the same way.
 * Shared by the server's and the config watcher's logs, so both read alike.
 */
public final class LogLine {
  private final StringBuilder sb;

  private LogLine(String event) {
    sb = new StringBuilder(128).append(event);
  }

  public static LogLine of(String event) {
    return new LogLine(event);
  }

  public LogLine kv(String key, Object value) {
    sb.append(' ').append(key).append('=').append(quote(value == null ? "-" : value.toString()));
    return this;
  }

  public static String quote(String v) {
    if (!v.isEmpty() && v.chars().noneMatch(c -> c == ' ' || c == '"' || c == '=' || c < 0x20)) {
      return v;
    }
    StringBuilder q = new StringBuilder(v.length() + 2).append('"');
    for (char c : v.toCharArray()) {
      switch (c) {
        case '"' -> q.append("\\\"");
        case '\\' -> q.append("\\\\");
        case '\n' -> q.append("\\n");
        case '\r' -> q.append("\\r");
        case '\t' -> q.append("\\t");
        default -> q.append(c < 0x20 ? String.format("\\u%04x", (int) c) : String.valueOf(c));
      }
    }
    return q.append('"').toString();
  }

  @Override
  public String toString() {
    return sb.toString();
  }
}
