package dev.meridian.internal.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.api.lowlevel.Compose;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.exceptions.MarkedYamlEngineException;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.SequenceNode;
import org.snakeyaml.engine.v2.nodes.Tag;
import org.snakeyaml.engine.v2.resolver.ScalarResolver;
import org.snakeyaml.engine.v2.schema.CoreSchema;
import org.snakeyaml.engine.v2.schema.Schema;

/**
 * A YAML 1.2 file (snakeyaml-engine) as {@link ConfigNode}s, keeping positions so errors can name
 * the line and column. Only plain data: no custom tags, no object construction. Scalars are not
 * converted here: YAML 1.1 resolution turned {@code yes} into {@code true} and {@code 0777} into
 * {@code 777} before the proto saw them (issue 18); now a scalar keeps its text and the target field
 * decides ({@link MessageReader}).
 */
final class YamlTree {
  private static final Schema SCHEMA = new ImplicitTagsSchema();
  /** Keys of YAML resources start with it, so they never equal a strict-JSON resource's text. */
  private static final char KEY_PREFIX = '\u0000';
  /** Deeper trees are refused: every reader of the tree recurses. */
  static final int MAX_DEPTH = 1000;

  private YamlTree() {}

  /** The file's tree, or null for a file without a document (empty, or only comments). */
  static ConfigNode read(String text) throws ConfigNode.Invalid {
    return compose(text).map(n -> (ConfigNode) new YamlNode(n, 0)).orElse(null);
  }

  /**
   * What a plain scalar is by YAML 1.2's core schema, exactly as this reader resolves it: null
   * (kind NULL), bool, int, float or string; null for anything else (a merge key, an ${ENV}).
   */
  static ConfigNode.Core corePlain(String value) {
    Tag t = SCHEMA.getScalarResolver().resolve(value, true);
    return t.equals(Tag.NULL) ? ConfigNode.Core.NULL : t.equals(Tag.BOOL) ? ConfigNode.Core.BOOL
        : t.equals(Tag.INT) ? ConfigNode.Core.INT : t.equals(Tag.FLOAT) ? ConfigNode.Core.FLOAT
        : t.equals(Tag.STR) ? ConfigNode.Core.STRING : null;
  }

  /** Whether {@code node} was read by this reader (the whole file, or one element). */
  static boolean isYamlTree(ConfigNode node) {
    return node instanceof YamlNode;
  }

  /**
   * The one element of a block sequence cut from a file ({@link YamlOutline}): {@code text} holds
   * the lines of {@code - ...} and its content as they stand in the file, starting at its 0-based
   * line {@code lineOffset}, so positions read as in the file. Null unless the text is exactly one
   * element without anchors (an alias reaches outside its element: only the whole file says what
   * it means) or it is not valid YAML by itself: the caller then reads the whole file.
   */
  static ConfigNode readElement(String text, int lineOffset) {
    List<ConfigNode> one = readElements(text, lineOffset, 1);
    return one == null ? null : one.get(0);
  }

  /**
   * As {@link #readElement}, for {@code count} consecutive elements of one sequence at once (one
   * parser for many small texts); null unless the text is exactly that many anchor-free elements.
   */
  static List<ConfigNode> readElements(String text, int lineOffset, int count) {
    Optional<Node> root;
    try {
      root = compose(text);
    } catch (ConfigNode.Invalid e) {
      return null;
    }
    if (root.isEmpty() || !(root.get() instanceof SequenceNode s) || s.getValue().size() != count
        || s.getAnchor().isPresent()) {
      return null;
    }
    boolean mayHaveAnchors = text.indexOf('&') >= 0; // else no anchor, so no alias either
    List<ConfigNode> out = new ArrayList<>(count);
    for (Node n : s.getValue()) {
      if (mayHaveAnchors && hasAnchor(n, 0)) {
        return null;
      }
      out.add(new YamlNode(n, lineOffset));
    }
    return out;
  }

  private static boolean hasAnchor(Node n, int depth) {
    if (n.getAnchor().isPresent() || depth > 1000) {
      return true;
    }
    if (n instanceof MappingNode m) {
      for (NodeTuple t : m.getValue()) {
        if (hasAnchor(t.getKeyNode(), depth + 1) || hasAnchor(t.getValueNode(), depth + 1)) {
          return true;
        }
      }
    } else if (n instanceof SequenceNode s) {
      for (Node item : s.getValue()) {
        if (hasAnchor(item, depth + 1)) {
          return true;
        }
      }
    }
    return false;
  }

  private static Optional<Node> compose(String text) throws ConfigNode.Invalid {
    LoadSettings settings = LoadSettings.builder()
        .setSchema(SCHEMA)
        .setAllowDuplicateKeys(false)
        .setAllowRecursiveKeys(false)
        .setMaxAliasesForCollections(50)
        .setCodePointLimit(256 * 1024 * 1024)
        .build();
    Optional<Node> root;
    try {
      root = new Compose(settings).composeString(text);
    } catch (MarkedYamlEngineException e) {
      Mark mark = e.getProblemMark().or(e::getContextMark).orElse(null);
      int line = mark != null ? mark.getLine() + 1 : 1;
      int column = mark != null ? mark.getColumn() + 1 : 1;
      // A misplaced key or list item, a tab, an unquoted ": ": said in the file's terms.
      ConfigNode.Invalid said;
      try {
        said = YamlErrors.explain(text, e.getProblem(), line, column);
      } catch (RuntimeException unexpected) {
        said = null; // the parser's own words, rather than none
      }
      if (said != null) {
        throw new ConfigNode.Invalid(said.line, said.column, "invalid YAML: " + said.getMessage());
      }
      throw new ConfigNode.Invalid(line, column, "invalid YAML: " + e.getProblem()
          + (e.getContext() != null ? " (" + e.getContext() + ")" : ""));
    } catch (YamlEngineException e) {
      throw new ConfigNode.Invalid(1, 1, "invalid YAML: " + e.getMessage());
    } catch (StackOverflowError e) {
      // The YAML parser recurses once per level and has no depth limit of its own: a file of
      // thousands of nested levels is refused here (the stack is unwound; nothing was shared).
      throw new ConfigNode.Invalid(1, 1, "YAML nested too deeply to read (over "
          + MAX_DEPTH + " levels)");
    }
    if (root.isPresent()) {
      height(root.get(), 0, new java.util.IdentityHashMap<>());
    }
    return root;
  }

  /**
   * The longest path below {@code n}, refusing a cycle and a tree deeper than {@link #MAX_DEPTH}.
   * An alias may name a node that contains it ({@code a: &a [*a]}): the composed graph then has a
   * cycle, and every walk of it would never end (issue 25, found by fuzzing). Heights are
   * remembered per node, so a node reached through many aliases is walked once.
   */
  private static int height(Node n, int depth, java.util.Map<Node, Integer> heights)
      throws ConfigNode.Invalid {
    Integer known = heights.get(n);
    if (known != null && known < 0) {
      throw invalid(n, "a YAML alias refers to a node that contains it");
    }
    if (depth + (known != null ? known : 0) > MAX_DEPTH) {
      throw invalid(n, "YAML nested deeper than " + MAX_DEPTH + " levels");
    }
    if (known != null) {
      return known;
    }
    heights.put(n, -1); // on the path being walked
    int h = 0;
    if (n instanceof MappingNode m) {
      for (NodeTuple t : m.getValue()) {
        h = Math.max(h, 1 + height(t.getKeyNode(), depth + 1, heights));
        h = Math.max(h, 1 + height(t.getValueNode(), depth + 1, heights));
      }
    } else if (n instanceof SequenceNode sq) {
      for (Node item : sq.getValue()) {
        h = Math.max(h, 1 + height(item, depth + 1, heights));
      }
    }
    heights.put(n, h);
    return h;
  }

  private static ConfigNode.Invalid invalid(Node n, String problem) {
    Mark mark = n.getStartMark().orElse(null);
    return new ConfigNode.Invalid(mark != null ? mark.getLine() + 1 : 1,
        mark != null ? mark.getColumn() + 1 : 1, problem);
  }

  /**
   * YAML 1.2's core schema, whose resolver hands out its own tag instances, so that a scalar whose
   * tag was resolved from its text (a plain {@code 5}) is told apart from one tagged in the file
   * ({@code !!str 5}) by identity, without resolving its text again.
   */
  private static final class ImplicitTagsSchema extends CoreSchema {
    // Equal to Tag.NULL... but not the same instances.
    private static final Tag NULL = new Tag(Tag.NULL.getValue());
    private static final Tag BOOL = new Tag(Tag.BOOL.getValue());
    private static final Tag INT = new Tag(Tag.INT.getValue());
    private static final Tag FLOAT = new Tag(Tag.FLOAT.getValue());
    private static final Tag STR = new Tag(Tag.STR.getValue());
    /** The core schema's null and bool words: the only plain scalars starting with a letter
     * that are not strings. */
    private static final java.util.Set<String> CORE_WORDS = java.util.Set.of("null", "Null",
        "NULL", "true", "True", "TRUE", "false", "False", "FALSE");

    private final ScalarResolver core = super.getScalarResolver();
    private final ScalarResolver resolver = (value, implicit) -> {
      if (implicit && !value.isEmpty() && Character.isLetter(value.charAt(0))
          && !CORE_WORDS.contains(value)) {
        return STR; // no number starts with a letter: the core schema's regexes would say str
      }
      Tag t = core.resolve(value, implicit);
      return t.equals(Tag.STR) ? STR : t.equals(Tag.INT) ? INT : t.equals(Tag.FLOAT) ? FLOAT
          : t.equals(Tag.BOOL) ? BOOL : t.equals(Tag.NULL) ? NULL : t;
    };

    @Override
    public ScalarResolver getScalarResolver() {
      return resolver;
    }

    static boolean implicit(Tag tag) {
      return tag == STR || tag == INT || tag == FLOAT || tag == BOOL || tag == NULL;
    }
  }

  private static final class YamlNode extends ConfigNode {
    final Node node;
    /** Lines before the text this node was read from (an element read apart from its file). */
    final int lineOffset;
    List<Entry> entries;
    List<ConfigNode> items;

    YamlNode(Node node, int lineOffset) {
      this.node = node;
      this.lineOffset = lineOffset;
    }

    @Override
    Kind kind() {
      if (node instanceof MappingNode) {
        return Kind.MAP;
      }
      if (node instanceof SequenceNode) {
        return Kind.SEQ;
      }
      return node.getTag().equals(Tag.NULL) ? Kind.NULL : Kind.SCALAR;
    }

    @Override
    int line() {
      return node.getStartMark().map(m -> m.getLine() + 1).orElse(1) + lineOffset;
    }

    @Override
    int column() {
      return node.getStartMark().map(m -> m.getColumn() + 1).orElse(1);
    }

    @Override
    List<Entry> entries() {
      if (entries != null) {
        return entries;
      }
      if (!(node instanceof MappingNode m)) {
        return entries = List.of();
      }
      List<Entry> out = new ArrayList<>(m.getValue().size());
      for (NodeTuple t : m.getValue()) {
        Node k = t.getKeyNode();
        YamlNode key = new YamlNode(k, lineOffset);
        out.add(new Entry(k instanceof ScalarNode s ? s.getValue() : null, key.line(), key.column(),
            new YamlNode(t.getValueNode(), lineOffset)));
      }
      return entries = out;
    }

    @Override
    List<ConfigNode> items() {
      if (items != null) {
        return items;
      }
      if (!(node instanceof SequenceNode s)) {
        return items = List.of();
      }
      List<ConfigNode> out = new ArrayList<>(s.getValue().size());
      for (Node n : s.getValue()) {
        out.add(new YamlNode(n, lineOffset));
      }
      return items = out;
    }

    @Override
    String scalar() {
      return node instanceof ScalarNode s ? s.getValue() : null;
    }

    @Override
    boolean plain() {
      return node instanceof ScalarNode s && s.isPlain() && ImplicitTagsSchema.implicit(s.getTag());
    }

    @Override
    Core core() {
      Tag tag = node.getTag();
      if (!(node instanceof ScalarNode s) || !s.isPlain() && ImplicitTagsSchema.implicit(tag)
          || tag.equals(Tag.STR)) {
        return Core.STRING;
      }
      return tag.equals(Tag.NULL) ? Core.NULL : tag.equals(Tag.BOOL) ? Core.BOOL
          : tag.equals(Tag.INT) ? Core.INT : tag.equals(Tag.FLOAT) ? Core.FLOAT : Core.STRING;
    }

    @Override
    String unsupported() {
      Tag tag = node.getTag();
      if (node instanceof ScalarNode) {
        return tag.equals(Tag.STR) || tag.equals(Tag.NULL) || tag.equals(Tag.BOOL)
            || tag.equals(Tag.INT) || tag.equals(Tag.FLOAT) ? null
            : "unsupported YAML tag " + tag;
      }
      Tag expected = node instanceof MappingNode ? Tag.MAP : Tag.SEQ;
      return tag.equals(expected) ? null : "unsupported YAML tag " + tag;
    }

    /**
     * The tree as text that tells apart every pair of trees that can read differently: a plain
     * scalar is marked apart from a quoted one ({@code yes} is a bool to a bool field, but
     * {@code "yes"} is not).
     */
    @Override
    String resourceKey() {
      StringBuilder sb = new StringBuilder(256).append(KEY_PREFIX);
      render(node, sb, 0);
      return sb.toString();
    }

    private static void render(Node n, StringBuilder sb, int depth) {
      if (depth > MAX_DEPTH) { // refused by read
        throw new IllegalStateException("YAML nested deeper than " + MAX_DEPTH + " levels");
      }
      if (n instanceof MappingNode m) {
        sb.append('{');
        for (NodeTuple t : m.getValue()) {
          render(t.getKeyNode(), sb, depth + 1);
          render(t.getValueNode(), sb, depth + 1);
        }
        sb.append('}');
      } else if (n instanceof SequenceNode s) {
        sb.append('[');
        for (Node item : s.getValue()) {
          render(item, sb, depth + 1);
        }
        sb.append(']');
      } else {
        ScalarNode s = (ScalarNode) n;
        boolean implicit = ImplicitTagsSchema.implicit(s.getTag());
        if (!implicit) {
          sb.append('!').append(s.getTag()); // an explicit tag: !!str 5 is not 5
        }
        sb.append(s.isPlain() ? 'p' : 'q');
        quote(s.getValue(), sb);
      }
    }

    private static void quote(String v, StringBuilder sb) {
      sb.append('"');
      if (v.indexOf('"') < 0 && v.indexOf('\\') < 0) {
        sb.append(v);
      } else {
        for (int i = 0; i < v.length(); i++) {
          char c = v.charAt(i);
          if (c == '"' || c == '\\') {
            sb.append('\\');
          }
          sb.append(c);
        }
      }
      sb.append('"');
    }
  }
}
