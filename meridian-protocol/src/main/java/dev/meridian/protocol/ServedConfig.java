package dev.meridian.protocol;

import io.envoyproxy.envoy.config.core.v3.Node;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the server serves: a default snapshot, and named groups chosen per node (first match wins).
 * Immutable.
 */
public final class ServedConfig {
  public static final String DEFAULT_GROUP = "default";

  /** A named group of resources for the nodes its matcher selects. */
  public record Group(String name, NodeMatcher matcher, Snapshot snapshot) {}

  private final Snapshot defaults;
  private final List<Group> groups;
  private final Map<String, Snapshot> byName = new LinkedHashMap<>();

  public ServedConfig(Snapshot defaults, List<Group> groups) {
    this.defaults = defaults;
    this.groups = List.copyOf(groups);
    byName.put(DEFAULT_GROUP, defaults);
    for (Group g : groups) {
      if (byName.put(g.name(), g.snapshot()) != null) {
        throw new IllegalArgumentException("duplicate group name " + g.name());
      }
    }
  }

  public static ServedConfig empty() {
    return new ServedConfig(Snapshot.empty(), List.of());
  }

  /** The group a node belongs to: the first group whose matcher matches, else the default. */
  public String groupFor(Node node) {
    for (Group g : groups) {
      if (g.matcher().matches(node)) {
        return g.name();
      }
    }
    return DEFAULT_GROUP;
  }

  /** The snapshot of a group; an unknown group (removed by a reload) serves nothing. */
  public Snapshot snapshot(String group) {
    return byName.getOrDefault(group, Snapshot.empty());
  }

  /** Group names, the default first. */
  public Iterable<String> groupNames() {
    return byName.keySet();
  }

  /** How many resources every group holds together, the default group included. */
  public int resourceCount() {
    int n = 0;
    for (Snapshot s : byName.values()) {
      n += s.size();
    }
    return n;
  }

  public List<Group> groups() {
    return groups;
  }

  public Snapshot defaults() {
    return defaults;
  }
}
