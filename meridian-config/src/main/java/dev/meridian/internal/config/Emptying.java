package dev.meridian.internal.config;

import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.ServedConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a reload would empty (issue 18 §2): every type that has resources now and none after, the
 * same within each group that stays, and every config file that had content and has none left.
 * A file caught between its truncation and its writing reads as exactly that, so the watcher
 * applies such a reload only once the files have been stable for a while.
 */
final class Emptying {
  /** Names shown per finding, and findings per warning: a warning stays one readable line. */
  private static final int MAX_NAMES = 5;
  private static final int MAX_FINDINGS = 10;

  private Emptying() {}

  /**
   * One line per emptied type or file, bounded; empty if {@code after} empties nothing.
   * {@code filledBefore}, {@code filledAfter}: the config files with content (see {@link #filled})
   * before and after; {@code afterFiles}: the files after.
   */
  static List<String> between(ServedConfig before, Set<Path> filledBefore, ServedConfig after,
      ConfigLoader.Contents afterFiles, Set<Path> filledAfter) {
    List<String> found = new ArrayList<>();
    int total = before.resourceCount();
    if (total > 0 && after.resourceCount() == 0) {
      found.add("the whole config: all " + total + " resources");
    }
    List<ResourceType> emptiedEverywhere = new ArrayList<>();
    for (ResourceType t : ResourceType.values()) {
      // Names are gathered (and sorted) only for a type emptied: a reload costs what changed.
      if (count(before, t) > 0 && count(after, t) == 0) {
        TreeSet<String> names = namesOf(before, t);
        emptiedEverywhere.add(t);
        found.add(t.abbreviation() + ": all " + names.size() + " " + listed(names));
      }
    }
    // A group's nodes see only the group: emptying a type there is an outage for them too.
    for (String g : before.groupNames()) {
      if (!contains(after, g)) {
        continue; // a removed group's nodes are placed again, in a group that serves them
      }
      for (ResourceType t : ResourceType.values()) {
        if (emptiedEverywhere.contains(t)) {
          continue;
        }
        var now = before.snapshot(g).get(t).resources().keySet();
        if (!now.isEmpty() && after.snapshot(g).get(t).size() == 0) {
          found.add("group " + g + " " + t.abbreviation() + ": all " + now.size() + " "
              + listed(new TreeSet<>(now)));
        }
      }
    }
    // A file truncated and not yet written (render > file) empties it, whatever the others hold.
    for (Path f : new TreeSet<>(filledBefore)) {
      if (!filledAfter.contains(f)) {
        found.add("file " + f.getFileName() + ": "
            + (afterFiles.files().contains(f) ? "emptied" : "removed"));
      }
    }
    if (found.size() > MAX_FINDINGS) {
      int more = found.size() - MAX_FINDINGS;
      found = new ArrayList<>(found.subList(0, MAX_FINDINGS));
      found.add("and " + more + " more");
    }
    return found;
  }

  /** The files with more than white space in them. */
  static Set<Path> filled(ConfigLoader.Contents contents) {
    Set<Path> filled = new HashSet<>();
    for (Path f : contents.files()) {
      byte[] b = contents.bytes().get(f);
      if (b == null || !blank(b)) {
        filled.add(f); // unreadable counts as content: its load fails and is reported
      }
    }
    return filled;
  }

  /**
   * Whether the bytes are only white space ({@link String#isBlank} of their UTF-8 text). A config
   * file's first bytes answer it: the file is not decoded (a copy of its size per reload).
   */
  static boolean blank(byte[] b) {
    for (byte x : b) {
      if (x < 0) {
        return new String(b, StandardCharsets.UTF_8).isBlank(); // non-ASCII: Unicode's spaces
      }
      if (!Character.isWhitespace(x)) {
        return false;
      }
    }
    return true;
  }

  private static boolean contains(ServedConfig c, String group) {
    for (String g : c.groupNames()) {
      if (g.equals(group)) {
        return true;
      }
    }
    return false;
  }

  private static int count(ServedConfig c, ResourceType t) {
    int n = 0;
    for (String g : c.groupNames()) {
      n += c.snapshot(g).get(t).size();
    }
    return n;
  }

  private static TreeSet<String> namesOf(ServedConfig c, ResourceType t) {
    TreeSet<String> names = new TreeSet<>();
    for (String g : c.groupNames()) {
      names.addAll(c.snapshot(g).get(t).resources().keySet());
    }
    return names;
  }

  private static String listed(TreeSet<String> names) {
    List<String> shown = names.stream().limit(MAX_NAMES).toList();
    return "(" + String.join(", ", shown)
        + (names.size() > MAX_NAMES ? ", " + (names.size() - MAX_NAMES) + " more" : "") + ")";
  }
}
