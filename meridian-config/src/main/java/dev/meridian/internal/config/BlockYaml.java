package dev.meridian.internal.config;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Reads the YAML that config files are made of, fast, for {@link YamlOutline}'s elements: block
 * mappings and sequences, one-line plain and quoted scalars, one-line flow collections, comments.
 * A first load of 20,000 resources spent most of its time in the general YAML parser's scanner,
 * events and marks, and in compiling them on a cold JVM (issue 23); this reader is one small
 * pass over the lines.
 *
 * <p>It reads exactly as {@link YamlTree} does, value by value and position by position (a
 * differential test holds it to that), and only what it is sure of: anything else (block scalars,
 * a scalar over several lines, escapes, anchors, tags, complex keys, tabs, a duplicate key, an
 * empty value, anything invalid) makes it answer null, and the caller reads the text with
 * {@link YamlTree}, which also reports every error.
 */
final class BlockYaml {
  /** Control flow for "not for this reader". */
  private static final class Decline extends Exception {
    Decline() {
      super(null, null, false, false);
    }
  }

  private static final Decline DECLINE = new Decline();

  private final String s;
  private final int lineOffset;
  /** Per line: start index, end of content (a comment and trailing spaces cut), indentation. */
  private final int[] start;
  private final int[] end;
  private final int[] indent;
  private final int lines;
  /** How deep the node being read is: recursion is bounded. */
  private int depth;
  private static final int MAX_DEPTH = 100;
  /** The YAML reader refuses a simple key longer than 1024 characters; longer ones are its. */
  private static final int MAX_KEY = 1000;

  private BlockYaml(String s, int lineOffset, int[] start, int[] end, int[] indent, int lines) {
    this.s = s;
    this.lineOffset = lineOffset;
    this.start = start;
    this.end = end;
    this.indent = indent;
    this.lines = lines;
  }

  /**
   * The elements of a block sequence, {@code count} of them, whose text starts at 0-based line
   * {@code lineOffset} of its file; null if this reader does not read all of it.
   */
  static List<ConfigNode> readElements(String text, int lineOffset, int count) {
    BlockYaml r = lines(text, lineOffset);
    if (r == null) {
      return null;
    }
    try {
      int first = r.nextContent(0);
      if (first < 0 || !r.dashAt(first, r.indent[first])) {
        return null;
      }
      List<ConfigNode> items = new ArrayList<>(count);
      int[] next = {first};
      r.sequence(first, r.indent[first], items, next);
      return next[0] < 0 && items.size() == count ? items : null;
    } catch (Decline e) {
      return null;
    }
  }

  private static BlockYaml lines(String text, int lineOffset) {
    int n = 1;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '\n') {
        n++;
      } else if (c == '\r' && (i + 1 == text.length() || text.charAt(i + 1) != '\n')) {
        return null; // a '\r' that does not end a line
      } else if (c < ' ' && c != '\r' || c >= 0x7f && c < 0xa0 || c >= 0xd800) {
        return null; // tabs, controls, surrogates (columns count code points), BOM, non-chars
      }
    }
    int[] start = new int[n];
    int[] end = new int[n];
    int[] indent = new int[n];
    int line = 0;
    int at = 0;
    while (line < n) {
      int nl = text.indexOf('\n', at);
      int e = nl < 0 ? text.length() : nl;
      if (e > at && text.charAt(e - 1) == '\r') {
        e--;
      }
      int i = at;
      while (i < e && text.charAt(i) == ' ') {
        i++;
      }
      start[line] = at;
      indent[line] = i - at;
      end[line] = contentEnd(text, i, e);
      line++;
      at = nl < 0 ? text.length() : nl + 1;
    }
    return new BlockYaml(text, lineOffset, start, end, indent, n);
  }

  /** The end of a line's content: before a comment (a '#' after a space) and trailing spaces. */
  private static int contentEnd(String text, int from, int e) {
    char quote = 0;
    for (int i = from; i < e; i++) {
      char c = text.charAt(i);
      if (quote != 0) {
        if (c == quote) {
          quote = 0;
        }
      } else if (c == '#' && (i == from || text.charAt(i - 1) == ' ')) {
        e = i;
        break;
      } else if ((c == '"' || c == '\'') && (i == from || " [{,:-".indexOf(text.charAt(i - 1)) >= 0)) {
        quote = c; // a quoted scalar may hold " #"
      }
    }
    while (e > from && text.charAt(e - 1) == ' ') {
      e--;
    }
    return e;
  }

  private boolean blank(int line) {
    return end[line] <= start[line] + indent[line];
  }

  private int nextContent(int from) {
    for (int l = from; l < lines; l++) {
      if (!blank(l)) {
        return l;
      }
    }
    return -1;
  }

  /** A '-' at index {@code at} of the line, followed by a space or the end of the content. */
  private boolean dashAt(int line, int col) {
    int i = start[line] + col;
    return i < end[line] && s.charAt(i) == '-' && (i + 1 == end[line] || s.charAt(i + 1) == ' ');
  }

  /**
   * A block sequence whose first '-' is at {@code (line, col)}; adds its items. {@code next[0]}
   * becomes the first content line after it, or -1 at the end of the text.
   */
  private void sequence(int line, int col, List<ConfigNode> items, int[] next) throws Decline {
    while (true) {
      int i = start[line] + col + 1;
      while (i < end[line] && s.charAt(i) == ' ') {
        i++;
      }
      if (i >= end[line]) {
        throw DECLINE; // an item on the lines below, or empty: left to the YAML reader
      }
      items.add(node(line, i - start[line], col, next, true));
      int l = next[0];
      if (l < 0 || indent[l] < col) {
        return;
      }
      if (indent[l] > col || !dashAt(l, col)) {
        if (indent[l] == col) {
          return; // the parent mapping's next key (a compact sequence)
        }
        throw DECLINE;
      }
      line = l;
    }
  }

  /**
   * The node starting at {@code (line, col)}, inside a block whose indentation is
   * {@code parent}; {@code next[0]} becomes the first content line after it. {@code block}: the
   * node starts a line's content or follows a '-', where a block collection may start; after a
   * key's ':' only a one-line value may (the YAML reader rejects the rest).
   */
  private ConfigNode node(int line, int col, int parent, int[] next, boolean block)
      throws Decline {
    if (++depth > MAX_DEPTH) {
      throw DECLINE; // deeper than configs go: the YAML reader bounds it
    }
    try {
      return nodeAt(line, col, parent, next, block);
    } finally {
      depth--;
    }
  }

  private ConfigNode nodeAt(int line, int col, int parent, int[] next, boolean block)
      throws Decline {
    boolean dash = dashAt(line, col);
    boolean key = !dash && keyEnd(line, start[line] + col) >= 0;
    if (dash || key) {
      if (!block) {
        throw DECLINE;
      }
      if (key) {
        return mapping(line, col, next);
      }
      List<ConfigNode> items = new ArrayList<>();
      sequence(line, col, items, next);
      return JsonConfig.Node.seq(line + 1 + lineOffset, col + 1, items);
    }
    ConfigNode value = inline(line, start[line] + col);
    next[0] = nextContent(line + 1);
    if (next[0] >= 0 && indent[next[0]] > parent) {
      throw DECLINE; // a scalar continued on the next line, or an error
    }
    return value;
  }

  /** A block mapping whose first key is at {@code (line, col)}. */
  private ConfigNode mapping(int line, int col, int[] next) throws Decline {
    List<ConfigNode.Entry> entries = new ArrayList<>();
    Set<String> keys = new HashSet<>();
    while (true) {
      int i = start[line] + col;
      int colon = keyEnd(line, i);
      if (colon < 0) {
        throw DECLINE;
      }
      if (colon - i > MAX_KEY) {
        throw DECLINE; // the YAML reader takes no longer simple key
      }
      String key = key(i, colon);
      if (s.charAt(i) != '"' && s.charAt(i) != '\'' && YamlTree.corePlain(key) == null
          || !keys.add(key)) {
        throw DECLINE; // a merge key; a duplicate key, which the YAML reader reports
      }
      int v = colon + 1;
      while (v < end[line] && s.charAt(v) == ' ') {
        v++;
      }
      ConfigNode value;
      if (v < end[line]) {
        value = node(line, v - start[line], col, next, false);
      } else {
        int l = nextContent(line + 1);
        if (l >= 0 && (indent[l] > col || indent[l] == col && dashAt(l, col))) {
          value = node(l, indent[l], col, next, true);
        } else {
          throw DECLINE; // an empty value
        }
      }
      entries.add(new ConfigNode.Entry(key, line + 1 + lineOffset, col + 1, value));
      int l = next[0];
      if (l < 0 || indent[l] < col) {
        return JsonConfig.Node.map(entries.isEmpty() ? 0 : entries.get(0).keyLine(), col + 1,
            entries);
      }
      if (indent[l] > col || dashAt(l, col)) {
        throw DECLINE;
      }
      line = l;
    }
  }

  /**
   * The index of the ':' ending a one-line key at {@code i} (plain, or double- or single-quoted
   * without escapes), followed by a space or the end of the content; -1 if there is none.
   */
  private int keyEnd(int line, int i) {
    int e = end[line];
    if (i >= e) {
      return -1;
    }
    char c = s.charAt(i);
    if (c == '"' || c == '\'') {
      int close = s.indexOf(c, i + 1);
      if (close < 0 || close >= e || c == '"' && hasBackslash(i + 1, close)
          || c == '\'' && close + 1 < e && s.charAt(close + 1) == '\'') {
        return -1;
      }
      int colon = close + 1;
      return colon < e && s.charAt(colon) == ':' && (colon + 1 == e || s.charAt(colon + 1) == ' ')
          ? colon : -1;
    }
    if (!plainStart(c, i, e)) {
      return -1;
    }
    for (int k = i; k < e; k++) {
      char ch = s.charAt(k);
      if (ch == ':' && (k + 1 == e || s.charAt(k + 1) == ' ')) {
        return k > i && s.charAt(k - 1) != ' ' ? k : -1;
      }
    }
    return -1;
  }

  private boolean hasBackslash(int from, int to) {
    for (int k = from; k < to; k++) {
      if (s.charAt(k) == '\\') {
        return true;
      }
    }
    return false;
  }

  private String key(int i, int colon) {
    char c = s.charAt(i);
    return c == '"' || c == '\'' ? s.substring(i + 1, colon - 1) : s.substring(i, colon);
  }

  /** A plain scalar may start here (not an indicator; '-', '?', ':' only before a non-space). */
  private boolean plainStart(char c, int i, int e) {
    if ("[]{},#&*!|>'\"%@`".indexOf(c) >= 0) {
      return false;
    }
    if (c == '-' || c == '?' || c == ':') {
      return i + 1 < e && s.charAt(i + 1) != ' ';
    }
    return true;
  }

  /** A value that stands on its line alone: a scalar or a flow collection. */
  private ConfigNode inline(int line, int i) throws Decline {
    int e = end[line];
    char c = s.charAt(i);
    if (c == '{' || c == '[') {
      int[] at = {i};
      ConfigNode flow = flow(line, at, e);
      if (at[0] != e) {
        throw DECLINE;
      }
      return flow;
    }
    if (c == '"' || c == '\'') {
      ConfigNode q = quoted(line, i, e);
      if (i + q.scalar().length() + 2 != e) {
        throw DECLINE; // something after the closing quote
      }
      return q;
    }
    if (!plainStart(c, i, e)) {
      throw DECLINE;
    }
    String text = s.substring(i, e);
    if (text.contains(": ") || text.endsWith(":") || text.contains(" #")) {
      throw DECLINE;
    }
    return plain(line, i, text);
  }

  private ConfigNode plain(int line, int i, String text) throws Decline {
    ConfigNode.Core core = YamlTree.corePlain(text);
    if (core == null) {
      throw DECLINE;
    }
    return new JsonConfig.Node(line + 1 + lineOffset, i - start[line] + 1,
        core == ConfigNode.Core.NULL ? ConfigNode.Kind.NULL : ConfigNode.Kind.SCALAR, core, text,
        true);
  }

  /** A quoted scalar without escapes, closed on its line. */
  private ConfigNode quoted(int line, int i, int e) throws Decline {
    char q = s.charAt(i);
    int close = s.indexOf(q, i + 1);
    if (close < 0 || close >= e) {
      throw DECLINE;
    }
    String text = s.substring(i + 1, close);
    if (q == '"' && text.indexOf('\\') >= 0 || q == '\'' && close + 1 < e
        && s.charAt(close + 1) == '\'') {
      throw DECLINE; // escapes
    }
    return new JsonConfig.Node(line + 1 + lineOffset, i - start[line] + 1,
        ConfigNode.Kind.SCALAR, ConfigNode.Core.STRING, text, false);
  }

  /** A one-line flow collection at {@code at[0]}; {@code at[0]} moves past it. */
  private ConfigNode flow(int line, int[] at, int e) throws Decline {
    if (++depth > MAX_DEPTH) {
      throw DECLINE;
    }
    try {
      return flowAt(line, at, e);
    } finally {
      depth--;
    }
  }

  private ConfigNode flowAt(int line, int[] at, int e) throws Decline {
    int open = at[0];
    boolean map = s.charAt(open) == '{';
    char close = map ? '}' : ']';
    List<ConfigNode.Entry> entries = new ArrayList<>();
    List<ConfigNode> items = new ArrayList<>();
    Set<String> keys = new HashSet<>();
    int i = skipSpaces(open + 1, e);
    if (i < e && s.charAt(i) == close) {
      at[0] = i + 1;
    } else {
      while (true) {
        if (map) {
          int keyAt = i;
          ConfigNode key = flowScalar(line, i, e, true);
          if (width(key) > MAX_KEY) {
            throw DECLINE;
          }
          i = skipSpaces(keyAt + width(key), e);
          if (i >= e || s.charAt(i) != ':') {
            throw DECLINE;
          }
          i = skipSpaces(i + 1, e);
          if (!keys.add(key.scalar())) {
            throw DECLINE;
          }
          int[] v = {i};
          ConfigNode value = flowValue(line, v, e);
          entries.add(new ConfigNode.Entry(key.scalar(), line + 1 + lineOffset,
              keyAt - start[line] + 1, value));
          i = skipSpaces(v[0], e);
        } else {
          int[] v = {i};
          items.add(flowValue(line, v, e));
          i = skipSpaces(v[0], e);
        }
        if (i < e && s.charAt(i) == ',') {
          i = skipSpaces(i + 1, e);
          if (i < e && s.charAt(i) == close) {
            throw DECLINE; // a trailing comma
          }
          continue;
        }
        if (i < e && s.charAt(i) == close) {
          at[0] = i + 1;
          break;
        }
        throw DECLINE;
      }
    }
    int lineNo = line + 1 + lineOffset;
    int col = open - start[line] + 1;
    return map ? JsonConfig.Node.map(lineNo, col, entries)
        : JsonConfig.Node.seq(lineNo, col, items);
  }

  private ConfigNode flowValue(int line, int[] at, int e) throws Decline {
    int i = at[0];
    if (i < e && (s.charAt(i) == '{' || s.charAt(i) == '[')) {
      return flow(line, at, e);
    }
    ConfigNode v = flowScalar(line, i, e, false);
    at[0] = i + width(v);
    return v;
  }

  /** The characters a one-line scalar took in the text: its value, and quotes if quoted. */
  private static int width(ConfigNode scalar) {
    return scalar.scalar().length() + (scalar.plain() ? 0 : 2);
  }

  /** A scalar inside a flow collection: quoted, or plain up to a flow indicator. */
  private ConfigNode flowScalar(int line, int i, int e, boolean key) throws Decline {
    if (i >= e) {
      throw DECLINE;
    }
    char c = s.charAt(i);
    if (c == '"' || c == '\'') {
      return quoted(line, i, e);
    }
    if (!plainStart(c, i, e) || c == ':'
        || (c == '-' || c == '?') && !Character.isLetterOrDigit(s.charAt(i + 1))) {
      throw DECLINE; // in flow, ':' is a value indicator and "-," is no scalar (the YAML reader)
    }
    int k = i;
    while (k < e) {
      char ch = s.charAt(k);
      if (ch == ',' || ch == '[' || ch == ']' || ch == '{' || ch == '}') {
        break;
      }
      if (ch == ':' && (k + 1 == e || " ,[]{}".indexOf(s.charAt(k + 1)) >= 0)) {
        break;
      }
      if (ch == '#' && s.charAt(k - 1) == ' ') {
        throw DECLINE;
      }
      k++;
    }
    int valueEnd = k;
    while (valueEnd > i && s.charAt(valueEnd - 1) == ' ') {
      valueEnd--;
    }
    if (valueEnd == i || !key && k < e && s.charAt(k) == ':') {
      throw DECLINE;
    }
    return plain(line, i, s.substring(i, valueEnd));
  }

  private int skipSpaces(int i, int e) {
    while (i < e && s.charAt(i) == ' ') {
      i++;
    }
    return i;
  }
}
