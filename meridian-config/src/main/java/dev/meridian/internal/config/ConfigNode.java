package dev.meridian.internal.config;

import java.util.List;

/**
 * One value of a config file as the loader walks it, with the line and column it starts on. Two
 * sources: a YAML node tree ({@link YamlTree}), or {@link JsonConfig}'s reader for strict JSON,
 * which hands over each resource as its raw text so an unchanged resource is recognized without
 * parsing it.
 *
 * <p>A scalar keeps the text as written. What it means is decided by the field it goes into
 * ({@link MessageReader}): a YAML plain scalar is a string in a string field and a number in a
 * number field, so {@code yes}, {@code 0777} or {@code 1e3} reach a string field unchanged (issue
 * 18). Only where no field says (google.protobuf.Value, the file's own keys) does {@link #core()}
 * decide, by YAML 1.2's core schema or by JSON's grammar.
 */
abstract class ConfigNode {
  enum Kind { MAP, SEQ, SCALAR, NULL }

  /** What a scalar is without a field to say: YAML 1.2 core schema, or JSON's token type. */
  enum Core { NULL, BOOL, INT, FLOAT, STRING }

  /** A mapping entry; {@code key} is null when the key is not a scalar. */
  record Entry(String key, int keyLine, int keyColumn, ConfigNode value) {}

  /** Kind {@link Kind#NULL} is a JSON {@code null}, or a YAML plain scalar the core schema calls null. */
  abstract Kind kind();

  /** 1-based. */
  abstract int line();

  /** 1-based. */
  abstract int column();

  List<Entry> entries() {
    return List.of();
  }

  List<ConfigNode> items() {
    return List.of();
  }

  /**
   * The text of a scalar as written (without quotes, escapes decoded); for a YAML null such as
   * {@code ~} its text too. Null for a JSON {@code null}, a mapping or a list.
   */
  String scalar() {
    return null;
  }

  /**
   * True for a YAML plain scalar: its type comes from the field it goes into. False for a quoted
   * (or {@code !!str}) scalar, which is always a string, and for every JSON token.
   */
  boolean plain() {
    return false;
  }

  Core core() {
    return Core.STRING;
  }

  /** Why this node cannot be read (an unsupported YAML tag), or null. */
  String unsupported() {
    return null;
  }

  /**
   * For a resource (an element of a {@code resources} list): a key that is equal only for
   * resources that read the same, so the loader can reuse what it parsed last time.
   */
  abstract String resourceKey();

  /** For a resource: its tree (a strict-JSON resource is parsed here, on a cache miss). */
  ConfigNode tree() {
    return this;
  }

  /** A problem in the text at a line and column (1-based). */
  static final class Invalid extends Exception {
    final int line;
    final int column;

    Invalid(int line, int column, String message) {
      super(message);
      this.line = line;
      this.column = column;
    }
  }
}
