package dev.meridian.internal.config;

import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.ServedConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a reload would empty, and whether that holds it. A file caught between its truncation and
 * its writing reads as empty, a prefix whose keys were all deleted loads as an empty config, and
 * either would tell every client that its resources are gone. So a reload that leaves the whole
 * config with nothing, leaves a type with nothing in a group whose connected clients subscribe to
 * it, or leaves a config file that had content blank, is held: not applied unless the operator
 * allows emptyings ({@code serve --allow-emptying}). Emptying a type no connected client
 * subscribes to cuts no one off: it is applied, with a warning.
 */
public final class Emptying {
  /** Names shown per finding, and findings per list: a log line stays readable. */
  private static final int MAX_NAMES = 5;
  private static final int MAX_FINDINGS = 10;

  private Emptying() {}

  /** Whether connected clients placed in {@code group} subscribe to {@code type}. */
  @FunctionalInterface
  public interface Subscribers {
    boolean subscribed(String group, ResourceType type);

    /** Anyone may be subscribed to anything: what holds every emptying. */
    Subscribers ANYONE = (group, type) -> true;
  }

  /**
   * What a reload would empty: {@code holding} would cut clients off (the whole config, a type
   * in a group whose clients subscribe to it, a config file left blank); {@code others} would not
   * (a type no connected client subscribes to, a file of a directory deleted). Both bounded.
   */
  public record Found(List<String> holding, List<String> others) {
    public static final Found NOTHING = new Found(List.of(), List.of());

    public Found {
      holding = List.copyOf(holding);
      others = List.copyOf(others);
    }

    public boolean any() {
      return !holding.isEmpty() || !others.isEmpty();
    }

    /** Whether this reload would cut someone off: it is held unless emptyings are allowed. */
    public boolean holds() {
      return !holding.isEmpty();
    }

    /** Every finding, those that hold first. */
    public List<String> all() {
      List<String> all = new ArrayList<>(holding);
      all.addAll(others);
      return all;
    }
  }

  /**
   * How a server judges emptyings: {@code allowEmptying} applies them all ({@code serve
   * --allow-emptying}); {@code subscribers} says who would be cut off.
   */
  public record Guard(boolean allowEmptying, Subscribers subscribers) {
    /** Holds every emptying, as though every group's clients subscribed to every type. */
    public static final Guard HOLD = new Guard(false, Subscribers.ANYONE);

    /** Whether a reload that would empty {@code found} is held. */
    public boolean holds(Found found) {
      return !allowEmptying && found.holds();
    }
  }

  /**
   * The resources of a config by group and type, as far as emptying needs them: a served config,
   * or the keys stored under an etcd prefix.
   */
  public interface Inventory {
    Iterable<String> groups();

    boolean hasGroup(String group);

    int count(String group, ResourceType type);

    /** Called only for a type emptied: a reload costs what changed. */
    Set<String> names(String group, ResourceType type);

    static Inventory of(ServedConfig c) {
      return new Inventory() {
        @Override public Iterable<String> groups() {
          return c.groupNames();
        }

        @Override public boolean hasGroup(String group) {
          for (String g : c.groupNames()) {
            if (g.equals(group)) {
              return true;
            }
          }
          return false;
        }

        @Override public int count(String group, ResourceType type) {
          return c.snapshot(group).get(type).size();
        }

        @Override public Set<String> names(String group, ResourceType type) {
          return c.snapshot(group).get(type).resources().keySet();
        }
      };
    }

    /** group → type → names; a group listed with no resources still stays. */
    static Inventory of(Map<String, Map<ResourceType, Set<String>>> byGroup) {
      return new Inventory() {
        @Override public Iterable<String> groups() {
          return byGroup.keySet();
        }

        @Override public boolean hasGroup(String group) {
          return byGroup.containsKey(group);
        }

        @Override public int count(String group, ResourceType type) {
          return names(group, type).size();
        }

        @Override public Set<String> names(String group, ResourceType type) {
          return byGroup.getOrDefault(group, Map.of()).getOrDefault(type, Set.of());
        }
      };
    }
  }

  /** {@link #find(Inventory, Inventory, List, List, Subscribers)} of two served configs. */
  public static Found find(ServedConfig before, ServedConfig after, List<Path> emptiedFiles,
      List<Path> removedFiles, Subscribers subscribers) {
    return find(Inventory.of(before), Inventory.of(after), emptiedFiles, removedFiles,
        subscribers);
  }

  /**
   * What going from {@code before} to {@code after} empties: the whole config, each type left
   * with nothing (across the config, or within a group that stays), and the config files that
   * had content and are now blank ({@code emptiedFiles}) or gone ({@code removedFiles}).
   */
  public static Found find(Inventory before, Inventory after, List<Path> emptiedFiles,
      List<Path> removedFiles, Subscribers subscribers) {
    List<String> holding = new ArrayList<>();
    List<String> others = new ArrayList<>();
    int total = 0;
    int left = 0;
    Map<ResourceType, Integer> countBefore = new HashMap<>();
    Map<ResourceType, Integer> countAfter = new HashMap<>();
    for (ResourceType t : ResourceType.values()) {
      int b = 0;
      for (String g : before.groups()) {
        b += before.count(g, t);
      }
      int a = 0;
      for (String g : after.groups()) {
        a += after.count(g, t);
      }
      countBefore.put(t, b);
      countAfter.put(t, a);
      total += b;
      left += a;
    }
    // Nothing left at all: every client is cut off, whoever is connected now.
    boolean whole = total > 0 && left == 0;
    if (whole) {
      holding.add("the whole config: all " + total + " resources");
    }
    Set<ResourceType> emptiedEverywhere = new HashSet<>();
    for (ResourceType t : ResourceType.values()) {
      if (countBefore.get(t) > 0 && countAfter.get(t) == 0) {
        emptiedEverywhere.add(t);
        TreeSet<String> names = new TreeSet<>();
        boolean watched = whole;
        for (String g : before.groups()) {
          if (before.count(g, t) > 0) {
            names.addAll(before.names(g, t));
            // A removed group's nodes are placed again, in a group that serves them.
            watched |= after.hasGroup(g) && subscribers.subscribed(g, t);
          }
        }
        (watched ? holding : others).add(t.abbreviation() + ": all " + names.size() + " "
            + listed(names));
      }
    }
    // A group's nodes see only the group: emptying a type there is an outage for them too.
    for (String g : before.groups()) {
      if (!after.hasGroup(g)) {
        continue;
      }
      for (ResourceType t : ResourceType.values()) {
        if (emptiedEverywhere.contains(t) || before.count(g, t) == 0 || after.count(g, t) > 0) {
          continue;
        }
        TreeSet<String> names = new TreeSet<>(before.names(g, t));
        (whole || subscribers.subscribed(g, t) ? holding : others).add("group " + g + " "
            + t.abbreviation() + ": all " + names.size() + " " + listed(names));
      }
    }
    // A blank file is what a truncation looks like: held whatever the other files hold.
    for (Path f : new TreeSet<>(emptiedFiles)) {
      holding.add("file " + f.getFileName() + ": emptied");
    }
    for (Path f : new TreeSet<>(removedFiles)) {
      (whole ? holding : others).add("file " + f.getFileName() + ": removed");
    }
    return new Found(bounded(holding), bounded(others));
  }

  /** The files of {@code filledBefore} blank in {@code after}. */
  static List<Path> emptied(Set<Path> filledBefore, ConfigLoader.Contents after,
      Set<Path> filledAfter) {
    List<Path> out = new ArrayList<>();
    for (Path f : filledBefore) {
      if (!filledAfter.contains(f) && after.files().contains(f)) {
        out.add(f);
      }
    }
    return out;
  }

  /** The files of {@code filledBefore} no longer in {@code after}. */
  static List<Path> removed(Set<Path> filledBefore, ConfigLoader.Contents after) {
    List<Path> out = new ArrayList<>();
    for (Path f : filledBefore) {
      if (!after.files().contains(f)) {
        out.add(f);
      }
    }
    return out;
  }

  private static List<String> bounded(List<String> found) {
    if (found.size() <= MAX_FINDINGS) {
      return found;
    }
    List<String> out = new ArrayList<>(found.subList(0, MAX_FINDINGS));
    out.add("and " + (found.size() - MAX_FINDINGS) + " more");
    return out;
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

  private static String listed(TreeSet<String> names) {
    List<String> shown = names.stream().limit(MAX_NAMES).toList();
    return "(" + String.join(", ", shown)
        + (names.size() > MAX_NAMES ? ", " + (names.size() - MAX_NAMES) + " more" : "") + ")";
  }
}
