package dev.meridian.internal.config;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Reads a YAML file by its resources' text, so that a reload costs what changed, not what the file
 * holds (issue 23): the elements of every block {@code resources:} list are cut out by their
 * lines, and only an element whose text the loader has not built before is parsed. The rest of
 * the file (top-level keys, groups' names and matches), with those lines left blank so that every
 * position stays where it is, is parsed as usual.
 *
 * <p>An element of a block sequence is everything from its {@code -} to the next {@code -} at the
 * same indentation, or to the first line indented less (YAML's block structure): read by itself it
 * means what it means in the file, unless something reaches across elements. Only an alias can,
 * so an element with an anchor is not read apart. Whenever this reading is not sure to agree with
 * the whole file's (a directive, a second document, a tab in an indentation, an element not valid
 * alone, a cut the rest of the file does not confirm), {@link #read} answers null and the caller
 * reads the whole file with {@link YamlTree}, which is also what reports every error.
 */
final class YamlOutline {
  private static final String RESOURCES = "resources:";
  /** Elements parsed together at most. */
  private static final int BATCH = 128;

  private final String text;
  /** Index of each line's first character; a last entry {@code text.length()}. */
  private final int[] starts;
  private final int lines;

  private YamlOutline(String text, int[] starts, int lines) {
    this.text = text;
    this.starts = starts;
    this.lines = lines;
  }

  /**
   * The file's tree with its block resources lists read element by element, or null when the
   * whole file must be read by {@link YamlTree} instead.
   *
   * @param known whether the loader already has the resource of an element's key; the others are
   *     parsed now, to find out whether every element reads by itself
   */
  static ConfigNode read(String text, Predicate<String> known) {
    YamlOutline o = lines(text);
    return o == null ? null : o.outline(known);
  }

  private static YamlOutline lines(String text) {
    int count = 1;
    for (int i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) {
      count++;
    }
    int[] starts = new int[count + 1];
    int line = 1;
    for (int i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) {
      starts[line++] = i + 1;
    }
    starts[count] = text.length();
    for (int i = text.indexOf('\r'); i >= 0; i = text.indexOf('\r', i + 1)) {
      if (i + 1 == text.length() || text.charAt(i + 1) != '\n') {
        return null; // a line break of '\r' alone: leave such a file to the YAML reader
      }
    }
    return new YamlOutline(text, starts, count);
  }

  /** One block resources list: its key's position, and its elements. */
  private record Run(int keyLine, int keyColumn, List<Element> elements) {}

  private ConfigNode outline(Predicate<String> known) {
    Map<Long, Run> runs = new HashMap<>();
    StringBuilder skeleton = new StringBuilder(Math.min(text.length(), 1 << 16));
    int copiedTo = 0; // text before this index is in the skeleton already
    boolean content = false;
    for (int i = 0; i < lines; ) {
      int s = starts[i];
      int ind = indent(i);
      if (s + ind < end(i) && text.charAt(s + ind) == '\t') {
        return null;
      }
      if (ind == 0 && (text.startsWith("%", s) || marker(i, "...")
          || marker(i, "---") && content)) {
        return null; // a directive, a document's end or a second document
      }
      if (blank(i)) {
        i++;
        continue;
      }
      content = true;
      int keyColumn = resourcesKey(i, ind);
      int first = keyColumn < 0 ? -1 : nextContent(i + 1);
      if (first < 0 || !dash(first) || indent(first) < keyColumn) {
        i++;
        continue;
      }
      int seqIndent = indent(first);
      List<Element> elements = new ArrayList<>();
      int from = first;
      int j = first + 1;
      for (; j < lines; j++) {
        // Most lines are indented past the sequence: inside the element, whatever follows.
        int at = starts[j];
        int past = at + seqIndent;
        while (at <= past && at < text.length() && text.charAt(at) == ' ') {
          at++;
        }
        if (at > past) {
          continue;
        }
        char c = at < text.length() ? text.charAt(at) : '\n';
        if (c == '\n' || c == '\r' || c == '#') {
          continue; // empty or a comment
        }
        if (at - starts[j] < seqIndent || !dash(j)) {
          break;
        }
        elements.add(element(from, j));
        from = j;
      }
      elements.add(element(from, j));
      runs.put(position(i + 1, keyColumn + 1), new Run(i + 1, keyColumn + 1, elements));
      // The elements' lines stay in the skeleton as empty lines: positions do not move.
      skeleton.append(text, copiedTo, starts[first]);
      for (int k = starts[first]; k < starts[j]; k++) {
        if (text.charAt(k) == '\n') {
          skeleton.append('\n');
        }
      }
      copiedTo = starts[j];
      i = j;
    }
    if (runs.isEmpty()) {
      return null; // nothing to cut: the YAML reader reads it the same
    }
    skeleton.append(text, copiedTo, text.length());
    // Every new element is parsed here: one that does not read by itself sends the file back to
    // the YAML reader. Neighbours are parsed together (one parser per batch, not per element),
    // and the batches on every core: a first load or a change of everything reads fast too.
    List<List<Element>> batches = new ArrayList<>();
    int unknown = 0;
    for (Run r : runs.values()) {
      List<Element> batch = null;
      for (Element e : r.elements) {
        if (known.test(e.key)) {
          batch = null;
          continue;
        }
        unknown++;
        if (batch == null || batch.size() == BATCH) {
          batch = new ArrayList<>();
          batches.add(batch);
        }
        batch.add(e);
      }
    }
    boolean allRead = (unknown > BATCH ? batches.parallelStream() : batches.stream())
        .allMatch(this::parse);
    if (!allRead) {
      return null;
    }
    ConfigNode root;
    try {
      root = YamlTree.read(skeleton.toString());
    } catch (ConfigNode.Invalid e) {
      return null;
    }
    if (root == null) {
      return null;
    }
    java.util.Set<Run> used = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    boolean[] twice = {false};
    ConfigNode patched = patch(root, runs, used, twice, 0);
    // Each cut confirmed by the file's structure exactly once (an alias may revisit a node).
    return used.size() == runs.size() && !twice[0] ? patched : null;
  }

  /** Parses consecutive elements of one list; false if any does not read by itself. */
  private boolean parse(List<Element> batch) {
    Element first = batch.get(0);
    Element last = batch.get(batch.size() - 1);
    String lines = text.substring(starts[first.lineOffset], starts[last.endLine]);
    List<ConfigNode> trees = BlockYaml.readElements(lines, first.lineOffset, batch.size());
    if (trees == null && batch.size() > 1) {
      trees = YamlTree.readElements(lines, first.lineOffset, batch.size());
    }
    if (trees == null) {
      return batch.stream().allMatch(Element::parse); // one by one: each must read alone
    }
    for (int i = 0; i < batch.size(); i++) {
      batch.get(i).set(trees.get(i));
    }
    return true;
  }

  private static long position(int line, int column) {
    return ((long) line << 32) | column;
  }

  /** The skeleton's tree with each cut list put back where its {@code resources:} key stands. */
  private static ConfigNode patch(ConfigNode node, Map<Long, Run> runs, java.util.Set<Run> used,
      boolean[] twice, int depth) {
    if (depth > 1000) {
      return node;
    }
    if (node.kind() == ConfigNode.Kind.MAP) {
      List<ConfigNode.Entry> entries = new ArrayList<>(node.entries().size());
      for (ConfigNode.Entry e : node.entries()) {
        Run run = "resources".equals(e.key()) && e.value().kind() == ConfigNode.Kind.NULL
            ? runs.get(position(e.keyLine(), e.keyColumn())) : null;
        if (run != null) {
          twice[0] |= !used.add(run);
          entries.add(new ConfigNode.Entry(e.key(), e.keyLine(), e.keyColumn(), new Cut(run)));
        } else {
          entries.add(new ConfigNode.Entry(e.key(), e.keyLine(), e.keyColumn(),
              patch(e.value(), runs, used, twice, depth + 1)));
        }
      }
      return new Patched(node, entries, List.of());
    }
    if (node.kind() == ConfigNode.Kind.SEQ) {
      List<ConfigNode> items = new ArrayList<>(node.items().size());
      for (ConfigNode item : node.items()) {
        items.add(patch(item, runs, used, twice, depth + 1));
      }
      return new Patched(node, List.of(), items);
    }
    return node;
  }

  /**
   * The element on lines {@code [from, to)}. Its key is its text after the line break before it
   * (an element never starts a file: its key line is above it): one copy of the text, and a key
   * no JSON text or YamlTree key equals (those never start with a line break).
   */
  private Element element(int from, int to) {
    return new Element(text.substring(starts[from] - 1, starts[to]), from, to);
  }

  private int end(int line) {
    int e = starts[line + 1];
    if (e > starts[line] && text.charAt(e - 1) == '\n') {
      e--;
    }
    if (e > starts[line] && text.charAt(e - 1) == '\r') {
      e--;
    }
    return e;
  }

  private int indent(int line) {
    int s = starts[line];
    int e = end(line);
    int i = s;
    while (i < e && text.charAt(i) == ' ') {
      i++;
    }
    return i - s;
  }

  /** Empty, spaces only, or a comment: no content. */
  private boolean blank(int line) {
    int at = starts[line] + indent(line);
    return at >= end(line) || text.charAt(at) == '#';
  }

  private boolean marker(int line, String marker) {
    int s = starts[line];
    int e = end(line);
    return text.startsWith(marker, s)
        && (s + 3 == e || text.charAt(s + 3) == ' ' || text.charAt(s + 3) == '\t');
  }

  /** A block sequence entry: {@code -} then a space or the line's end. */
  private boolean dash(int line) {
    int at = starts[line] + indent(line);
    int e = end(line);
    return at < e && text.charAt(at) == '-' && (at + 1 == e || text.charAt(at + 1) == ' ');
  }

  private int nextContent(int from) {
    for (int j = from; j < lines; j++) {
      if (!blank(j)) {
        return j;
      }
    }
    return -1;
  }

  /**
   * The 0-based column of a {@code resources:} key with nothing after it but a comment (its value
   * is on the lines below), alone or as the first key of a sequence entry; -1 otherwise.
   */
  private int resourcesKey(int line, int ind) {
    int at = starts[line] + ind;
    int e = end(line);
    if (dash(line)) {
      at++;
      while (at < e && text.charAt(at) == ' ') {
        at++;
      }
    }
    if (!text.startsWith(RESOURCES, at)) {
      return -1;
    }
    int column = at - starts[line];
    int i = at + RESOURCES.length();
    if (i < e && text.charAt(i) != ' ') {
      return -1;
    }
    while (i < e && text.charAt(i) == ' ') {
      i++;
    }
    return i == e || text.charAt(i) == '#' ? column : -1;
  }

  /** A cut resources list: a sequence of its elements, at its first {@code -}. */
  private static final class Cut extends ConfigNode {
    private final Run run;
    private final List<ConfigNode> items;

    Cut(Run run) {
      this.run = run;
      this.items = List.copyOf(run.elements);
    }

    @Override
    Kind kind() {
      return Kind.SEQ;
    }

    @Override
    int line() {
      return run.elements.get(0).lineOffset + 1;
    }

    @Override
    int column() {
      return run.elements.get(0).key.indexOf('-');
    }

    @Override
    List<ConfigNode> items() {
      return items;
    }

    @Override
    String resourceKey() {
      throw new IllegalStateException("not an element of a resources list");
    }
  }

  /**
   * One element of a resources list, as its lines: equal text is an equal resource, so the text
   * is the loader's cache key; the tree is read only for a text the loader has not built.
   */
  private static final class Element extends ConfigNode {
    /** A line break, then the element's lines as they stand in the file. */
    final String key;
    final int lineOffset;
    /** The 0-based line after its last. */
    final int endLine;
    private volatile ConfigNode tree;

    Element(String key, int lineOffset, int endLine) {
      this.key = key;
      this.lineOffset = lineOffset;
      this.endLine = endLine;
    }

    /** Where the element's tree starts, and its kind: kept when the tree is handed out. */
    private int line;
    private int column;
    private Kind kind;

    /** Reads the tree; false if this text does not read by itself. */
    boolean parse() {
      ConfigNode t = read();
      if (t != null) {
        set(t);
      }
      return t != null;
    }

    void set(ConfigNode t) {
      line = t.line();
      column = t.column();
      kind = t.kind();
      tree = t;
    }

    private ConfigNode read() {
      String text = key.substring(1);
      List<ConfigNode> fast = BlockYaml.readElements(text, lineOffset, 1);
      return fast != null ? fast.get(0) : YamlTree.readElement(text, lineOffset);
    }

    /**
     * The tree, handed out once and then forgotten: a file's outline is kept for the next load,
     * its parsed trees are not (they would hold a node per value of the file). A later call
     * parses the text again.
     */
    @Override
    ConfigNode tree() {
      ConfigNode t = tree;
      tree = null;
      if (t == null) {
        t = read();
        if (t == null) {
          throw new IllegalStateException("element at line " + (lineOffset + 1)
              + " was read before but no longer reads by itself");
        }
      }
      return t;
    }

    @Override
    Kind kind() {
      return kind != null ? kind : tree().kind();
    }

    @Override
    int line() {
      return kind != null ? line : tree().line();
    }

    @Override
    int column() {
      return kind != null ? column : tree().column();
    }

    @Override
    String resourceKey() {
      return key;
    }
  }

  /** A node of the skeleton whose entries or items were patched. */
  private static final class Patched extends ConfigNode {
    private final ConfigNode base;
    private final List<Entry> entries;
    private final List<ConfigNode> items;

    Patched(ConfigNode base, List<Entry> entries, List<ConfigNode> items) {
      this.base = base;
      this.entries = entries;
      this.items = items;
    }

    @Override
    Kind kind() {
      return base.kind();
    }

    @Override
    int line() {
      return base.line();
    }

    @Override
    int column() {
      return base.column();
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
    String unsupported() {
      return base.unsupported();
    }

    @Override
    String resourceKey() {
      return base.resourceKey();
    }

    @Override
    ConfigNode tree() {
      return this;
    }
  }
}
