package dev.meridian.internal.config;

import java.util.ArrayList;
import java.util.List;

/**
 * Reads a config file that is strict JSON (RFC 8259) in one pass, without a node per value: the
 * elements of every {@code resources} list are checked and kept as their raw text, which is the
 * loader's cache key, and are parsed into a tree only when that text is new. A one-resource edit
 * of a 20,000-resource file thus parses one resource (issue 8: the diff must not re-process
 * unchanged resources), where the YAML reader composes every node of the file.
 *
 * <p>A {@code .json} file must be strict JSON: a trailing comma, a comment or an unquoted key is an
 * error with its line and column (issue 18), not a silent second reading as YAML. A YAML file whose
 * text happens to be strict JSON is read here too, faster, with YAML's meaning (a {@code null} into
 * a string field is the text "null", as the YAML reader would have it); any other YAML file is left
 * to {@link YamlTree}.
 */
final class JsonConfig {
  private static final int SKIP = 0; // check only
  private static final int TREE = 1; // ConfigNodes; resources as raw text at the file level
  private static final int MAX_DEPTH = 512;
  /** Keys of YAML-file resources read here; never equal to a JSON file's (see YamlTree too). */
  private static final char YAML_KEY_PREFIX = '\u0001';

  /** Control flow for "not strict JSON"; where and why are kept in the reader. */
  private static final class NotJson extends Exception {
    NotJson() {
      super(null, null, false, false);
    }
  }

  private static final NotJson NOT_JSON = new NotJson();

  private final String s;
  private final int end;
  /** Strict JSON semantics (a .json file); false: YAML semantics for a YAML file's JSON text. */
  private final boolean json;
  /** Reading a file's structure (resources lists become Spans), not one resource. */
  private final boolean file;
  private int pos;
  private int line;
  private int lineStart; // index of the current line's first character, for columns
  private int depth;
  private int errorAt = -1;
  private String error;

  private JsonConfig(String s, boolean json, boolean file, int line, int column) {
    this.s = s;
    this.end = s.length();
    this.json = json;
    this.file = file;
    this.line = line;
    this.lineStart = 1 - column;
  }

  /** A {@code .json} file's tree; null if it holds no value (empty or only whitespace). */
  static ConfigNode readJson(String text) throws ConfigNode.Invalid {
    JsonConfig r = new JsonConfig(text, true, true, 1, 1);
    try {
      r.skipBom();
      r.ws();
      if (r.pos == r.end) {
        return null;
      }
      ConfigNode root = (ConfigNode) r.value(TREE, false);
      r.ws();
      if (r.pos != r.end) {
        throw r.fail(r.pos, r.expected("the end of the file after the top-level value"));
      }
      return root;
    } catch (NotJson e) {
      int line = 1;
      int lineStart = 0;
      for (int i = 0; i < r.errorAt && i < text.length(); i++) {
        if (text.charAt(i) == '\n') {
          line++;
          lineStart = i + 1;
        }
      }
      throw new ConfigNode.Invalid(line, r.errorAt - lineStart + 1, "invalid JSON: " + r.error);
    }
  }

  /**
   * A YAML file's tree if its text is a strict JSON object (the fast path), else null: read it as
   * YAML then.
   */
  static ConfigNode readYamlAsJson(String text) {
    JsonConfig r = new JsonConfig(text, false, true, 1, 1);
    try {
      r.skipBom();
      r.ws();
      if (r.pos == r.end || r.s.charAt(r.pos) != '{') {
        return null;
      }
      ConfigNode root = (ConfigNode) r.value(TREE, false);
      r.ws();
      return r.pos == r.end ? root : null;
    } catch (NotJson e) {
      return null;
    }
  }

  private void skipBom() {
    if (pos < end && s.charAt(pos) == '\uFEFF') {
      pos++;
      lineStart++;
    }
  }

  private Object value(int mode, boolean resources) throws NotJson {
    ws();
    if (pos == end) {
      throw fail(pos, "expected a value, found the end of the file");
    }
    int at = line;
    int col = pos - lineStart + 1;
    char c = s.charAt(pos);
    switch (c) {
      case '{':
        return object(mode, at, col);
      case '[':
        return array(mode, at, col, resources);
      case '"': {
        String v = string(mode == TREE);
        return mode == TREE ? new Node(at, col, ConfigNode.Kind.SCALAR, ConfigNode.Core.STRING, v,
            false) : null;
      }
      case 't':
        return literal("true", mode, at, col, ConfigNode.Core.BOOL);
      case 'f':
        return literal("false", mode, at, col, ConfigNode.Core.BOOL);
      case 'n':
        return literal("null", mode, at, col, ConfigNode.Core.NULL);
      default: {
        if (c != '-' && (c < '0' || c > '9')) {
          throw fail(pos, c == '\'' ? "strings must be in double quotes"
              : expected("a value (a string in double quotes, a number, true, false, null, an"
                  + " object or an array)"));
        }
        int start = pos;
        boolean integer = number();
        return mode == TREE ? new Node(at, col, ConfigNode.Kind.SCALAR,
            integer ? ConfigNode.Core.INT : ConfigNode.Core.FLOAT, s.substring(start, pos), !json)
            : null;
      }
    }
  }

  private Object object(int mode, int at, int col) throws NotJson {
    enter();
    pos++;
    List<ConfigNode.Entry> entries = mode == TREE ? new ArrayList<>() : null;
    ws();
    if (pos < end && s.charAt(pos) == '}') {
      pos++;
    } else {
      int comma = -1;
      while (true) {
        ws();
        int keyLine = line;
        int keyCol = pos - lineStart + 1;
        if (pos >= end || s.charAt(pos) != '"') {
          throw comma >= 0 && pos < end && s.charAt(pos) == '}'
              ? fail(comma, "a trailing comma is not allowed in JSON")
              : fail(pos, expected("a key in double quotes"));
        }
        String key = string(mode == TREE);
        ws();
        if (pos >= end || s.charAt(pos) != ':') {
          throw fail(pos, expected("':' after the key"));
        }
        pos++;
        ws();
        // The file's resources lists: each element kept as text (see Span).
        Object v = value(mode, file && mode == TREE && key.equals("resources"));
        if (mode == TREE) {
          entries.add(new ConfigNode.Entry(key, keyLine, keyCol, (ConfigNode) v));
        }
        ws();
        if (pos < end && s.charAt(pos) == '}') {
          pos++;
          break;
        }
        if (pos >= end || s.charAt(pos) != ',') {
          throw fail(pos, expected("',' or '}'"));
        }
        comma = pos;
        pos++;
      }
    }
    depth--;
    return mode == TREE ? Node.map(at, col, entries) : null;
  }

  /** An array; as a resource list, its elements are kept as their text (see {@link Span}). */
  private Object array(int mode, int at, int col, boolean resources) throws NotJson {
    enter();
    pos++;
    List<ConfigNode> items = mode == TREE ? new ArrayList<>() : null;
    ws();
    if (pos < end && s.charAt(pos) == ']') {
      pos++;
    } else {
      int comma = -1;
      while (true) {
        ws();
        if (comma >= 0 && pos < end && s.charAt(pos) == ']') {
          throw fail(comma, "a trailing comma is not allowed in JSON");
        }
        if (resources && mode == TREE) {
          int start = pos;
          int startLine = line;
          int startCol = pos - lineStart + 1;
          value(SKIP, false);
          items.add(new Span(startLine, startCol, s.substring(start, pos), json));
        } else if (mode == TREE) {
          items.add((ConfigNode) value(TREE, false));
        } else {
          value(SKIP, false);
        }
        ws();
        if (pos < end && s.charAt(pos) == ']') {
          pos++;
          break;
        }
        if (pos >= end || s.charAt(pos) != ',') {
          throw fail(pos, expected("',' or ']'"));
        }
        comma = pos;
        pos++;
      }
    }
    depth--;
    return mode == TREE ? Node.seq(at, col, items) : null;
  }

  private Object literal(String word, int mode, int at, int col, ConfigNode.Core core)
      throws NotJson {
    if (!s.startsWith(word, pos)) {
      throw fail(pos, expected("a value") + " (JSON's literals are true, false and null)");
    }
    pos += word.length();
    if (mode != TREE) {
      return null;
    }
    // A JSON null has no text; in a YAML file it is the plain scalar "null".
    return core == ConfigNode.Core.NULL
        ? new Node(at, col, ConfigNode.Kind.NULL, core, json ? null : word, !json)
        : new Node(at, col, ConfigNode.Kind.SCALAR, core, word, !json);
  }

  private String string(boolean decode) throws NotJson {
    int open = pos;
    pos++; // the opening quote
    int start = pos;
    StringBuilder sb = null;
    while (true) {
      if (pos >= end) {
        throw fail(open, "unterminated string");
      }
      char c = s.charAt(pos);
      if (c == '"') {
        String out = null;
        if (decode) {
          out = sb == null ? s.substring(start, pos) : sb.append(s, start, pos).toString();
        }
        pos++;
        return out;
      }
      if (c < 0x20) {
        throw fail(pos, c == '\n' ? "unterminated string (a line break must be written \\n)"
            : "a control character in a string must be escaped (\\t, \\u0000)");
      }
      if (c != '\\') {
        pos++;
        continue;
      }
      if (decode) {
        if (sb == null) {
          sb = new StringBuilder();
        }
        sb.append(s, start, pos);
      }
      if (pos + 1 >= end) {
        throw fail(open, "unterminated string");
      }
      char e = s.charAt(pos + 1);
      int escape = pos;
      pos += 2;
      char v;
      switch (e) {
        case '"', '\\', '/' -> v = e;
        case 'b' -> v = '\b';
        case 'f' -> v = '\f';
        case 'n' -> v = '\n';
        case 'r' -> v = '\r';
        case 't' -> v = '\t';
        case 'u' -> {
          int code = 0;
          for (int i = 0; i < 4; i++) {
            int digit = pos + i < end ? Character.digit(s.charAt(pos + i), 16) : -1;
            if (digit < 0) {
              throw fail(escape, "invalid escape: \\u needs four hex digits");
            }
            code = code * 16 + digit;
          }
          pos += 4;
          v = (char) code;
        }
        default -> throw fail(escape, "invalid escape \\" + e);
      }
      if (decode) {
        sb.append(v);
      }
      start = pos;
    }
  }

  /** A number by RFC 8259's grammar; true if it has neither fraction nor exponent. */
  private boolean number() throws NotJson {
    int start = pos;
    boolean integer = true;
    if (at('-')) {
      pos++;
    }
    if (at('0')) {
      pos++;
      if (pos < end && Character.isDigit(s.charAt(pos))) {
        throw fail(start, "a number must not have leading zeros");
      }
    } else {
      digits(start);
    }
    if (at('.')) {
      pos++;
      digits(start);
      integer = false;
    }
    if (at('e') || at('E')) {
      pos++;
      if (at('+') || at('-')) {
        pos++;
      }
      digits(start);
      integer = false;
    }
    return integer;
  }

  /** One or more digits. */
  private void digits(int numberStart) throws NotJson {
    int start = pos;
    while (pos < end && s.charAt(pos) >= '0' && s.charAt(pos) <= '9') {
      pos++;
    }
    if (pos == start) {
      throw fail(numberStart, "invalid number");
    }
  }

  private boolean at(char c) {
    return pos < end && s.charAt(pos) == c;
  }

  /** "expected WHAT, found X"; a comment gets its own message, as the likeliest mistake. */
  private String expected(String what) {
    if (pos >= end) {
      return "expected " + what + ", found the end of the file";
    }
    char c = s.charAt(pos);
    if (c == '#' || c == '/' && pos + 1 < end && (s.charAt(pos + 1) == '/' || s.charAt(pos + 1) == '*')) {
      return "comments are not allowed in JSON (RFC 8259); a .yaml file may have them";
    }
    return "expected " + what + ", found '" + new String(Character.toChars(s.codePointAt(pos))) + "'";
  }

  private void ws() {
    while (pos < end) {
      char c = s.charAt(pos);
      if (c == '\n') {
        line++;
        lineStart = pos + 1;
      } else if (c != ' ' && c != '\t' && c != '\r') {
        return;
      }
      pos++;
    }
  }

  private void enter() throws NotJson {
    if (++depth > MAX_DEPTH) {
      throw fail(pos, "nested deeper than " + MAX_DEPTH + " levels");
    }
  }

  private NotJson fail(int at, String message) {
    if (errorAt < 0) {
      errorAt = at;
      error = message;
    }
    return NOT_JSON;
  }

  /**
   * A value of the file's structure, or of a resource parsed on a cache miss; also what
   * {@link BlockYaml} reads.
   */
  static final class Node extends ConfigNode {
    final int line;
    final int column;
    final Kind kind;
    final Core core;
    final String scalar;
    final boolean plain;
    final List<Entry> entries;
    final List<ConfigNode> items;

    Node(int line, int column, Kind kind, Core core, String scalar, boolean plain) {
      this(line, column, kind, core, scalar, plain, List.of(), List.of());
    }

    private Node(int line, int column, Kind kind, Core core, String scalar, boolean plain,
        List<Entry> entries, List<ConfigNode> items) {
      this.line = line;
      this.column = column;
      this.kind = kind;
      this.core = core;
      this.scalar = scalar;
      this.plain = plain;
      this.entries = entries;
      this.items = items;
    }

    static Node map(int line, int column, List<Entry> entries) {
      return new Node(line, column, Kind.MAP, Core.STRING, null, false, entries, List.of());
    }

    static Node seq(int line, int column, List<ConfigNode> items) {
      return new Node(line, column, Kind.SEQ, Core.STRING, null, false, List.of(), items);
    }

    @Override
    Kind kind() {
      return kind;
    }

    @Override
    int line() {
      return line;
    }

    @Override
    int column() {
      return column;
    }

    @Override
    List<Entry> entries() {
      return entries;
    }

    @Override
    List<ConfigNode> items() {
      return items;
    }

    @Override
    String scalar() {
      return scalar;
    }

    @Override
    boolean plain() {
      return plain;
    }

    @Override
    Core core() {
      return core;
    }

    @Override
    String resourceKey() {
      throw new IllegalStateException("not an element of a resources list");
    }
  }

  /**
   * One element of a {@code resources} list, as its text (already checked to be JSON). Equal text
   * is an equal resource, so the text is the cache key; the tree is built only on a miss.
   */
  private static final class Span extends ConfigNode {
    final int line;
    final int column;
    final String text;
    final boolean json;

    Span(int line, int column, String text, boolean json) {
      this.line = line;
      this.column = column;
      this.text = text;
      this.json = json;
    }

    @Override
    Kind kind() {
      char c = text.charAt(0);
      return c == '{' ? Kind.MAP : c == '[' ? Kind.SEQ : c == 'n' ? Kind.NULL : Kind.SCALAR;
    }

    @Override
    int line() {
      return line;
    }

    @Override
    int column() {
      return column;
    }

    @Override
    String resourceKey() {
      return json ? text : YAML_KEY_PREFIX + text;
    }

    @Override
    ConfigNode tree() {
      try {
        return (ConfigNode) new JsonConfig(text, json, false, line, column).value(TREE, false);
      } catch (NotJson e) {
        throw new IllegalStateException("checked when the file was read", e);
      }
    }
  }
}
