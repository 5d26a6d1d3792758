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

  /**
   * Reads a line {@link #toString} wrote back into its event ({@code "event"}) and its pairs, in
   * order; null when {@code line} is not such a line (a plain message).
   */
  public static java.util.LinkedHashMap<String, String> parse(String line) {
    java.util.LinkedHashMap<String, String> out = new java.util.LinkedHashMap<>();
    int i = line.indexOf(' ');
    String event = i < 0 ? line : line.substring(0, i);
    if (!event.matches("[a-z][a-z0-9_]*")) {
      return null;
    }
    out.put("event", event);
    int n = line.length();
    while (i >= 0 && i < n) {
      if (line.charAt(i) != ' ') {
        return null;
      }
      int eq = line.indexOf('=', i + 1);
      if (eq < 0) {
        return null;
      }
      String key = line.substring(i + 1, eq);
      if (!key.matches("[a-z][a-z0-9_]*")) {
        return null;
      }
      int j = eq + 1;
      StringBuilder v = new StringBuilder();
      if (j < n && line.charAt(j) == '"') {
        j++;
        boolean closed = false;
        while (j < n) {
          char c = line.charAt(j++);
          if (c == '"') {
            closed = true;
            break;
          }
          if (c != '\\' || j >= n) {
            v.append(c);
            continue;
          }
          char e = line.charAt(j++);
          switch (e) {
            case 'n' -> v.append('\n');
            case 'r' -> v.append('\r');
            case 't' -> v.append('\t');
            case 'u' -> {
              if (j + 4 > n) {
                return null;
              }
              v.append((char) Integer.parseInt(line.substring(j, j + 4), 16));
              j += 4;
            }
            default -> v.append(e);
          }
        }
        if (!closed) {
          return null;
        }
      } else {
        int end = line.indexOf(' ', j);
        end = end < 0 ? n : end;
        v.append(line, j, end);
        j = end;
      }
      out.put(key, v.toString());
      i = j == n ? -1 : j;
    }
    return out;
  }
}
