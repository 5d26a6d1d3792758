package dev.meridian.internal.config;

import java.util.ArrayList;
import java.util.List;

/**
 * The YAML parser's errors about indentation and quoting, in a user's words: its own
 * ({@code expected <block end>, but found '<block mapping start>'}) name its grammar, not the
 * mistake. Each says which line is off, where it stands and where the lines before it stand.
 */
final class YamlErrors {
  private YamlErrors() {}

  /**
   * The words for the parser's {@code problem} at 1-based {@code line} and {@code column} of
   * {@code text}, with the line and column they are about; null when it is not one of the
   * mistakes known here (the parser's own words are kept).
   */
  static ConfigNode.Invalid explain(String text, String problem, int line, int column) {
    if (problem == null) {
      return null;
    }
    String[] lines = text.split("\n", -1);
    if (line < 1 || line > lines.length) {
      return null;
    }
    if (problem.contains("(TAB)") || problem.contains("tab character")) {
      return new ConfigNode.Invalid(line, column, "line " + line + ": a tab in the "
          + "indentation; YAML indents with spaces only");
    }
    boolean key = problem.startsWith("expected <block end>, but found '<block mapping start>'")
        || problem.startsWith("expected <block end>, but found '?'");
    boolean item = problem.startsWith("expected <block end>, but found '<block sequence start>'")
        || problem.startsWith("expected <block end>, but found '-'");
    boolean colon = problem.startsWith("mapping values are not allowed here");
    if (!key && !item && !colon) {
      return null;
    }
    Line at = Line.of(lines[line - 1], line);
    if (at == null) {
      return null;
    }
    if (colon) {
      // "k: a: b" on one line: the value holds ": ". Else the line goes on a plain value above.
      String quoted = quoteValue(lines[line - 1], column - 1);
      if (quoted != null) {
        return new ConfigNode.Invalid(line, column, "line " + line + ": a value that holds ': ' "
            + "must be quoted, e.g. " + quoted);
      }
    }
    if (item || at.item && !key) {
      Line before = previous(lines, line, l -> l.item);
      if (before == null || before.dash == at.dash) {
        return null;
      }
      return new ConfigNode.Invalid(line, at.dash, "line " + line + ": this list item is "
          + "indented " + (at.dash > before.dash ? "more" : "less") + " than the items before "
          + "it: it is at column " + at.dash + ", the item on line " + before.number
          + " at column " + before.dash + "; line them up");
    }
    Line before = previous(lines, line, l -> true);
    if (before == null) {
      return null;
    }
    if (at.key > before.key) {
      return new ConfigNode.Invalid(line, at.key, "line " + line + ": this key is indented "
          + "more than the keys before it: " + at.name() + " is at column " + at.key + ", "
          + before.name() + " (line " + before.number + ") at column " + before.key
          + "; line them up");
    }
    List<Line> above = new ArrayList<>();
    int min = Integer.MAX_VALUE;
    for (int n = line - 1; n >= 1 && min > 1; n--) {
      Line l = Line.of(lines[n - 1], n);
      if (l != null && l.key < min) {
        above.add(l);
        min = l.key;
      }
    }
    if (above.isEmpty() || above.stream().anyMatch(l -> l.key == at.key)) {
      return null; // in line with a mapping above: not an indentation mistake known here
    }
    StringBuilder columns = new StringBuilder();
    for (int i = 0; i < above.size(); i++) {
      Line l = above.get(i);
      columns.append(i == 0 ? "" : i == above.size() - 1 ? " and " : ", ").append(l.key)
          .append(" (").append(l.name()).append(", line ").append(l.number).append(')');
    }
    return new ConfigNode.Invalid(line, at.key, "line " + line + ": this key is indented less "
        + "than the keys before it, but not as little as any mapping above it: " + at.name()
        + " is at column " + at.key + "; the keys above it are at column"
        + (above.size() > 1 ? "s " : " ") + columns + "; line it up with the keys of its mapping");
  }

  /** The nearest line above {@code line} with content that {@code which} takes, or null. */
  private static Line previous(String[] lines, int line, java.util.function.Predicate<Line> which) {
    for (int n = line - 1; n >= 1; n--) {
      Line l = Line.of(lines[n - 1], n);
      if (l != null && which.test(l)) {
        return l;
      }
    }
    return null;
  }

  /**
   * {@code k: "a: b"} for a line {@code k: a: b} whose second {@code :} is at 0-based
   * {@code colon}; null when the line has no key before it.
   */
  private static String quoteValue(String text, int colon) {
    int first = text.indexOf(": ");
    if (first < 0 || first >= colon || text.substring(0, first).contains("\"")
        || text.substring(0, first).contains("'")) {
      return null;
    }
    String keyPart = text.substring(0, first + 2).strip();
    String value = text.substring(first + 2).strip();
    int comment = value.indexOf(" #");
    if (comment >= 0) {
      value = value.substring(0, comment).strip();
    }
    String q = value.contains("\"") ? "'" + value.replace("'", "''") + "'" : "\"" + value + "\"";
    return "`" + keyPart + " " + q + "`";
  }

  /** A line with content: its number, where its key starts, and its "- " if it is a list item. */
  private record Line(int number, String text, int key, boolean item, int dash) {
    /** Null for a blank line, a comment or a document marker. */
    static Line of(String text, int number) {
      int i = 0;
      while (i < text.length() && text.charAt(i) == ' ') {
        i++;
      }
      if (i == text.length() || text.charAt(i) == '#' || text.charAt(i) == '\r'
          || text.startsWith("---") || text.startsWith("...")) {
        return null;
      }
      int dash = i + 1;
      boolean item = text.charAt(i) == '-'
          && (i + 1 == text.length() || text.charAt(i + 1) == ' ');
      if (item) {
        i++;
        while (i < text.length() && text.charAt(i) == ' ') {
          i++;
        }
      }
      return new Line(number, text, i + 1, item, dash);
    }

    /** The key this line starts with, in backticks, or "the value" if it has none. */
    String name() {
      String rest = text.substring(Math.min(key - 1, text.length()));
      int colon = rest.indexOf(':');
      String k = colon > 0 ? rest.substring(0, colon).strip() : "";
      return k.isEmpty() || k.length() > 60 ? "the value" : "`" + k + "`";
    }
  }
}
