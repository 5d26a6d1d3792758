package dev.meridian.config;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a config file that is strict JSON (RFC 8259) in one pass, without a node per value: the
 * elements of every {@code resources} list are checked and kept as their raw text, which is the
 * loader's cache key, and are parsed into a JSON tree only when that text is new. A one-resource
 * edit of a 20,000-resource file thus parses one resource (issue 8: the diff must not re-process
 * unchanged resources), where the YAML reader composes every node of the file.
 *
 * <p>Text that is not strict JSON with an object at the top (YAML, JSON with comments or
 * unquoted keys, a syntax error) is left to the YAML reader, which reads JSON too: both paths
 * accept the same files, and YAML's messages report syntax errors.
 */
final class JsonConfig {
  private static final int SKIP = 0; // check only
  private static final int TREE = 1; // ConfigNodes, resources as raw text
  private static final int GSON = 2; // a JSON tree, for one resource
  private static final int MAX_DEPTH = 512;

  /** Control flow for "not strict JSON": no message, no stack. */
  private static final class NotJson extends Exception {
    NotJson() {
      super(null, null, false, false);
    }
  }

  private static final NotJson NOT_JSON = new NotJson();

  private final String s;
  private final int end;
  private int pos;
  private int line;
  private int depth;

  private JsonConfig(String s, int line) {
    this.s = s;
    this.end = s.length();
    this.line = line;
  }

  /** The file's tree, or null if the text is not a strict JSON object (read it as YAML then). */
  static ConfigNode read(String text) {
    JsonConfig r = new JsonConfig(text, 1);
    try {
      r.ws();
      if (r.pos == r.end || r.s.charAt(r.pos) != '{') {
        return null;
      }
      ConfigNode root = (ConfigNode) r.value(TREE);
      r.ws();
      return r.pos == r.end ? root : null;
    } catch (NotJson | YamlTree.TreeException e) {
      return null;
    }
  }

  private Object value(int mode) throws NotJson, YamlTree.TreeException {
    ws();
    int at = line;
    char c = peek();
    switch (c) {
      case '{':
        return object(mode, at);
      case '[':
        return array(mode, at, false);
      case '"': {
        String v = string(mode != SKIP);
        return mode == TREE ? Node.scalar(at, ConfigNode.Kind.SCALAR, v)
            : mode == GSON ? new JsonPrimitive(v) : null;
      }
      case 't':
        return literal("true", mode, at, Boolean.TRUE);
      case 'f':
        return literal("false", mode, at, Boolean.FALSE);
      case 'n':
        return literal("null", mode, at, null);
      default: {
        String v = number(mode != SKIP);
        if (mode == TREE) {
          return Node.scalar(at, ConfigNode.Kind.SCALAR, v);
        }
        if (mode == GSON) {
          boolean integer = v.indexOf('.') < 0 && v.indexOf('e') < 0 && v.indexOf('E') < 0;
          return new JsonPrimitive(integer ? new BigInteger(v) : new BigDecimal(v));
        }
        return null;
      }
    }
  }

  private Object object(int mode, int at) throws NotJson, YamlTree.TreeException {
    enter();
    pos++;
    List<ConfigNode.Entry> entries = mode == TREE ? new ArrayList<>() : null;
    JsonObject object = mode == GSON ? new JsonObject() : null;
    ws();
    if (peek() == '}') {
      pos++;
    } else {
      while (true) {
        ws();
        int keyLine = line;
        if (peek() != '"') {
          throw NOT_JSON;
        }
        String key = string(mode != SKIP);
        ws();
        if (next() != ':') {
          throw NOT_JSON;
        }
        if (mode == TREE) {
          ws();
          ConfigNode v = key.equals("resources") && peek() == '['
              ? (ConfigNode) array(TREE, line, true) : (ConfigNode) value(TREE);
          entries.add(new ConfigNode.Entry(key, keyLine, v));
        } else if (mode == GSON) {
          if (object.has(key)) {
            throw new YamlTree.TreeException(keyLine, "duplicate key '" + key + "'");
          }
          object.add(key, (JsonElement) value(GSON));
        } else {
          value(SKIP);
        }
        ws();
        char d = next();
        if (d == '}') {
          break;
        }
        if (d != ',') {
          throw NOT_JSON;
        }
      }
    }
    depth--;
    return mode == TREE ? Node.map(at, entries) : object;
  }

  /** An array; as a resource list, its elements are kept as their text (see {@link Span}). */
  private Object array(int mode, int at, boolean resources) throws NotJson, YamlTree.TreeException {
    enter();
    pos++;
    List<ConfigNode> items = mode == TREE ? new ArrayList<>() : null;
    JsonArray array = mode == GSON ? new JsonArray() : null;
    ws();
    if (peek() == ']') {
      pos++;
    } else {
      while (true) {
        ws();
        if (resources) {
          int start = pos;
          int startLine = line;
          value(SKIP);
          items.add(new Span(startLine, s.substring(start, pos)));
        } else if (mode == TREE) {
          items.add((ConfigNode) value(TREE));
        } else if (mode == GSON) {
          array.add((JsonElement) value(GSON));
        } else {
          value(SKIP);
        }
        ws();
        char d = next();
        if (d == ']') {
          break;
        }
        if (d != ',') {
          throw NOT_JSON;
        }
      }
    }
    depth--;
    return mode == TREE ? Node.seq(at, items) : array;
  }

  private Object literal(String word, int mode, int at, Boolean value) throws NotJson {
    if (!s.startsWith(word, pos)) {
      throw NOT_JSON;
    }
    pos += word.length();
    if (mode == TREE) {
      return value == null ? Node.scalar(at, ConfigNode.Kind.NULL, word)
          : Node.scalar(at, ConfigNode.Kind.SCALAR, word);
    }
    if (mode == GSON) {
      return value == null ? JsonNull.INSTANCE : new JsonPrimitive(value);
    }
    return null;
  }

  private String string(boolean decode) throws NotJson {
    pos++; // the opening quote
    int start = pos;
    StringBuilder sb = null;
    while (true) {
      if (pos >= end) {
        throw NOT_JSON;
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
        throw NOT_JSON; // raw control characters are not allowed in JSON strings
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
        throw NOT_JSON;
      }
      char e = s.charAt(pos + 1);
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
          if (pos + 4 > end) {
            throw NOT_JSON;
          }
          int code = 0;
          for (int i = 0; i < 4; i++) {
            int digit = Character.digit(s.charAt(pos + i), 16);
            if (digit < 0) {
              throw NOT_JSON;
            }
            code = code * 16 + digit;
          }
          pos += 4;
          v = (char) code;
        }
        default -> throw NOT_JSON;
      }
      if (decode) {
        sb.append(v);
      }
      start = pos;
    }
  }

  private String number(boolean keep) throws NotJson {
    int start = pos;
    if (at('-')) {
      pos++;
    }
    if (at('0')) {
      pos++;
    } else {
      digits();
    }
    if (at('.')) {
      pos++;
      digits();
    }
    if (at('e') || at('E')) {
      pos++;
      if (at('+') || at('-')) {
        pos++;
      }
      digits();
    }
    return keep ? s.substring(start, pos) : null;
  }

  /** One or more digits. */
  private void digits() throws NotJson {
    int start = pos;
    while (pos < end && s.charAt(pos) >= '0' && s.charAt(pos) <= '9') {
      pos++;
    }
    if (pos == start) {
      throw NOT_JSON;
    }
  }

  private boolean at(char c) {
    return pos < end && s.charAt(pos) == c;
  }

  private char peek() throws NotJson {
    if (pos >= end) {
      throw NOT_JSON;
    }
    return s.charAt(pos);
  }

  private char next() throws NotJson {
    char c = peek();
    pos++;
    return c;
  }

  private void ws() {
    while (pos < end) {
      char c = s.charAt(pos);
      if (c == '\n') {
        line++;
      } else if (c != ' ' && c != '\t' && c != '\r') {
        return;
      }
      pos++;
    }
  }

  private void enter() throws NotJson {
    if (++depth > MAX_DEPTH) {
      throw NOT_JSON;
    }
  }

  /** A value of the file's structure (everything but the resources themselves). */
  private static final class Node extends ConfigNode {
    final int line;
    final Kind kind;
    final String scalar;
    final List<Entry> entries;
    final List<ConfigNode> items;

    private Node(int line, Kind kind, String scalar, List<Entry> entries, List<ConfigNode> items) {
      this.line = line;
      this.kind = kind;
      this.scalar = scalar;
      this.entries = entries;
      this.items = items;
    }

    static Node scalar(int line, Kind kind, String text) {
      return new Node(line, kind, text, List.of(), List.of());
    }

    static Node map(int line, List<Entry> entries) {
      return new Node(line, Kind.MAP, null, entries, List.of());
    }

    static Node seq(int line, List<ConfigNode> items) {
      return new Node(line, Kind.SEQ, null, List.of(), items);
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
    List<Entry> entries() {
      return entries;
    }

    @Override
    List<ConfigNode> items() {
      return items;
    }

    @Override
    String scalar() {
      return kind == Kind.SCALAR ? scalar : null;
    }

    @Override
    String resourceKey() {
      throw new IllegalStateException("not an element of a resources list");
    }

    @Override
    JsonElement json() {
      throw new IllegalStateException("not an element of a resources list");
    }
  }

  /**
   * One element of a {@code resources} list, as its text (already checked to be JSON). Equal text
   * is an equal resource, so the text is the cache key; the JSON tree is built only on a miss.
   */
  private static final class Span extends ConfigNode {
    final int line;
    final String text;

    Span(int line, String text) {
      this.line = line;
      this.text = text;
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
    String resourceKey() {
      return text;
    }

    @Override
    JsonElement json() throws YamlTree.TreeException {
      try {
        return (JsonElement) new JsonConfig(text, line).value(GSON);
      } catch (NotJson e) {
        throw new IllegalStateException("checked when the file was read", e);
      }
    }
  }
}
