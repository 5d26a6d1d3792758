package dev.meridian.internal.protocol;

import io.envoyproxy.envoy.config.core.v3.Node;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

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
  private final SecretAccess secretAccess;
  private final Map<String, Snapshot> byName = new LinkedHashMap<>();
  /** Places nodes instead of the groups' matchers (the embedding API); null: the matchers. */
  private final Placer placer;
  /** The xdstp authorities served (A47, {@code serve --authority}); empty: every one. */
  private final Set<String> authorities;

  /**
   * Where a node goes, decided by the embedding application's own function instead of group
   * matchers. Called for each stream's first request and again for each config change that
   * concerns it: it must be fast and must not block.
   */
  @FunctionalInterface
  public interface Placer {
    Placement place(Node node, String identity);
  }

  public ServedConfig(Snapshot defaults, List<Group> groups) {
    this(defaults, groups, SecretAccess.NONE);
  }

  public ServedConfig(Snapshot defaults, List<Group> groups, SecretAccess secretAccess) {
    this.defaults = defaults;
    this.groups = List.copyOf(groups);
    this.secretAccess = secretAccess;
    this.placer = null;
    this.authorities = Set.of();
    byName.put(DEFAULT_GROUP, defaults);
    for (Group g : groups) {
      if (byName.put(g.name(), g.snapshot()) != null) {
        throw new IllegalArgumentException("duplicate group name " + g.name());
      }
    }
  }

  /**
   * A config whose nodes {@code placer} places (the embedding API): {@code snapshots} by group
   * name; a group the placer names that is not here serves nothing.
   */
  public ServedConfig(Map<String, Snapshot> snapshots, Placer placer, SecretAccess secretAccess) {
    this.defaults = snapshots.getOrDefault(DEFAULT_GROUP, Snapshot.empty());
    this.groups = List.of();
    this.secretAccess = secretAccess;
    this.placer = placer;
    this.authorities = Set.of();
    // Only the groups published: "default" is a name like any other here.
    new java.util.TreeMap<>(snapshots).forEach(byName::put);
  }

  private ServedConfig(ServedConfig from, Set<String> authorities) {
    this.authorities = Set.copyOf(authorities);
    this.defaults = from.defaults.servingAuthorities(this.authorities);
    this.groups = from.groups.stream().map(g -> new Group(g.name(), g.matcher(),
        g.snapshot().servingAuthorities(this.authorities))).toList();
    this.secretAccess = from.secretAccess;
    this.placer = from.placer;
    from.byName.forEach((name, snapshot) -> byName.put(name,
        snapshot == from.defaults ? defaults : snapshot.servingAuthorities(this.authorities)));
  }

  /**
   * This config as a server of only these xdstp {@code authorities} serves it (gRFC A47; {@code
   * serve --authority}): a resource named {@code xdstp://} with another authority is left out, so
   * a request for it is answered as for any name that does not exist. Empty: every authority
   * (this config itself). Resources with other names are all kept.
   */
  public ServedConfig servingAuthorities(Set<String> authorities) {
    return authorities.isEmpty() && this.authorities.isEmpty() ? this
        : new ServedConfig(this, authorities);
  }

  /** Whether resources of the xdstp {@code authority} are served (see {@link #servingAuthorities}). */
  public boolean servesAuthority(String authority) {
    return authorities.isEmpty() || authorities.contains(authority);
  }

  /** The function that places nodes, or null when the groups' matchers do. */
  public Placer placer() {
    return placer;
  }

  public static ServedConfig empty() {
    return new ServedConfig(Snapshot.empty(), List.of());
  }

  /**
   * Where a node goes: a group, or refused ({@code denied} says why; then {@code group} is the
   * group it claimed).
   */
  public record Placement(String group, String denied) {
    public boolean isDenied() {
      return denied != null;
    }
  }

  /**
   * The group a node with this verified identity (null: none) belongs to: the first group whose
   * match selects it. A group that requires an identity selects a node only with an identity it
   * allows; a node that claims such a group by what it declares (its id or cluster) without one
   * is refused, never placed in another group (issue 20: a node id is a claim, an identity is
   * proof). A group matched by identity alone is simply not this node's when the identity differs.
   */
  public Placement place(Node node, String identity) {
    if (placer != null) {
      return placer.place(node, identity);
    }
    for (Group g : groups) {
      NodeMatcher m = g.matcher();
      if (!m.matches(node)) {
        continue;
      }
      if (m.allowsIdentity(identity)) {
        return new Placement(g.name(), null);
      }
      if (m.selectsByNode()) {
        // The node id and identity are named, the rule is not: it is the operator's to read.
        return new Placement(g.name(), "node '" + node.getId() + "' claims group '" + g.name()
            + "', which its identity does not prove; this stream's identity is "
            + (identity == null ? "none (no verified client certificate)" : "'" + identity + "'"));
      }
    }
    return new Placement(DEFAULT_GROUP, null);
  }

  /** The group of a node with no verified identity (see {@link #place}); null if refused. */
  public String groupFor(Node node) {
    Placement p = place(node, null);
    return p.isDenied() ? null : p.group();
  }

  /** Who may receive which Secret. */
  public SecretAccess secretAccess() {
    return secretAccess;
  }

  /** The snapshot of a group; an unknown group (removed by a reload) serves nothing. */
  public Snapshot snapshot(String group) {
    return byName.getOrDefault(group, Snapshot.empty());
  }

  /** Group names: the default first, then in config order (placed configs: only those published, sorted). */
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
