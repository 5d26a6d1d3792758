package dev.meridian.internal.protocol;

import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/** Immutable: every resource of one type in one group, by name, and the type's version. */
public final class TypeSnapshot {
  private static final TypeSnapshot EMPTY = new TypeSnapshot(new TreeMap<>());

  private final SortedMap<String, XdsResource> resources;
  private final String version;
  private final Map<String, XdsResource> byAlias;
  /** The same resources hashed by name: lookups on the fan-out path need no string compares. */
  private final Map<String, XdsResource> byName;
  /** The resources in name order: a whole-type answer, the same list for every client. */
  private final List<XdsResource> list;

  private TypeSnapshot(SortedMap<String, XdsResource> resources) {
    this.resources = Collections.unmodifiableSortedMap(resources);
    Map<String, XdsResource> aliases = new java.util.HashMap<>();
    for (XdsResource r : resources.values()) {
      for (String a : r.aliases()) {
        aliases.putIfAbsent(a, r);
      }
    }
    this.byAlias = aliases.isEmpty() ? Map.of() : aliases;
    this.byName = new java.util.HashMap<>(resources);
    this.list = List.copyOf(resources.values());
    TreeMap<String, String> versions = new TreeMap<>();
    resources.forEach((n, r) -> versions.put(n, r.version()));
    this.version = Versions.ofView(versions);
    this.memo = resources.isEmpty() ? null : new Memo();
  }

  public static TypeSnapshot empty() {
    return EMPTY;
  }

  public static TypeSnapshot of(Iterable<XdsResource> resources) {
    TreeMap<String, XdsResource> map = new TreeMap<>();
    for (XdsResource r : resources) {
      if (map.put(r.name(), r) != null) {
        throw new IllegalArgumentException("duplicate " + r.type().abbreviation() + " name " + r.name());
      }
    }
    return map.isEmpty() ? EMPTY : new TypeSnapshot(map);
  }

  public XdsResource get(String name) {
    return byName.get(name);
  }

  /**
   * Whether {@code list} holds exactly this snapshot's resources, as the same instances, each
   * once (in any order): then {@code TypeSnapshot.of(list)} would equal this one.
   */
  boolean sameInstances(List<XdsResource> list) {
    if (list.size() != byName.size()) {
      return false;
    }
    Set<String> seen = new HashSet<>(list.size() * 2);
    for (XdsResource r : list) {
      if (byName.get(r.name()) != r || !seen.add(r.name())) {
        return false;
      }
    }
    return true;
  }

  /** By name, or else by alias (VHDS subscribes virtual hosts by alias). */
  public XdsResource resolve(String nameOrAlias) {
    XdsResource r = resources.get(nameOrAlias);
    return r != null ? r : byAlias.get(nameOrAlias);
  }

  /** Every resource in name order (one list, built once). */
  public List<XdsResource> list() {
    return list;
  }

  public SortedMap<String, XdsResource> resources() {
    return resources;
  }

  public int size() {
    return resources.size();
  }

  private volatile Map<String, String> versionMap;

  /** name → version of every resource, built once and shared by every client in sync with it. */
  public Map<String, String> versionMap() {
    Map<String, String> m = versionMap;
    if (m == null) {
      Map<String, String> built = new java.util.HashMap<>(resources.size() * 4 / 3 + 1);
      resources.forEach((n, r) -> built.put(n, r.version()));
      versionMap = m = Collections.unmodifiableMap(built);
    }
    return m;
  }

  private volatile io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse sotwWhole;
  private volatile io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse deltaWhole;
  private volatile io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse deltaWholeNoTtl;

  /**
   * A SotW response carrying only every resource's Any, in name order, built once. A whole-type
   * response merges it into its empty builder, and protobuf then shares the list instead of
   * copying 10,000 references per client.
   */
  public io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse sotwWhole() {
    io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse w = sotwWhole;
    if (w == null) {
      sotwWhole = w = io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse.newBuilder()
          .addAllResources(resources.values().stream().map(XdsResource::any).toList()).build();
    }
    return w;
  }

  /** As {@link #sotwWhole()}, for Delta: every resource as Delta carries it (with TTLs or not). */
  public io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse deltaWhole(
      boolean withTtl) {
    io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse w =
        withTtl ? deltaWhole : deltaWholeNoTtl;
    if (w == null) {
      w = io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse.newBuilder()
          .addAllResources(resources.values().stream().map(r -> r.wrapped(withTtl)).toList())
          .build();
      if (withTtl) {
        deltaWhole = w;
      } else {
        deltaWholeNoTtl = w;
      }
    }
    return w;
  }

  /** Whether every one of {@code names} is a resource here. */
  public boolean hasAll(Set<String> names) {
    return names.size() <= byName.size() && byName.keySet().containsAll(names);
  }

  /** Whether {@code names} are exactly this snapshot's resource names. */
  public boolean hasExactly(Set<String> names) {
    return names.size() == byName.size() && hasAll(names);
  }

  /** Null in {@link #EMPTY}, which every server in the JVM shares (see {@link #memo()}). */
  private final Memo memo;

  /**
   * Answers about this snapshot that an interning {@link Sharing} remembers: after a reload every
   * stream in sync asks the same question about the same large (interned) set or earlier version
   * map. Kept with the snapshot so that they go when it goes; only the interning Sharing asks.
   * Null for the empty snapshot: it is a JVM-wide constant, so the Sharing (one per hub) keeps
   * its own memo of it ({@link #newMemo()}), and no hub's objects are remembered process-wide.
   */
  Memo memo() {
    return memo;
  }

  /** A memo of answers about this snapshot, for its owner to keep (see {@link #memo()}). */
  Memo newMemo() {
    return new Memo();
  }

  /** See {@link #memo()}. Keyed by identity: the questions are asked about shared objects. */
  final class Memo {
    private final IdentityMemo<Set<String>, Boolean> hasAll = new IdentityMemo<>(4);
    private final IdentityMemo<Map<String, String>, Diff> toWhole = new IdentityMemo<>(2);
    private final IdentityMemo<Set<String>, String> viewVersion = new IdentityMemo<>(4);

    boolean hasAll(Set<String> names) {
      return names.size() <= size() && hasAll.computeIfAbsent(names, TypeSnapshot.this::hasAll);
    }

    /** {@link TypeSnapshot#viewVersion} of an interned set of names. */
    String viewVersion(Set<String> names) {
      return viewVersion.computeIfAbsent(names, TypeSnapshot.this::viewVersion);
    }

    /** {@link Diff#toWhole} from {@code held}, a version map shared by many clients. */
    Diff toWhole(Map<String, String> held) {
      return toWhole.computeIfAbsent(held,
          h -> Diff.toWhole(VersionMap.shared(h), TypeSnapshot.this));
    }
  }

  /** The view-version of all resources of this type (see {@link Versions#ofView}). */
  public String version() {
    return version;
  }

  /**
   * The view-version of the resources among {@code names} that exist here: what a client
   * subscribed to exactly those names holds. Names that cover every resource give {@link #version}.
   */
  public String viewVersion(Set<String> names) {
    TreeMap<String, String> versions = new TreeMap<>();
    for (String n : names) {
      XdsResource r = byName.get(n);
      if (r != null) {
        versions.put(n, r.version());
      }
    }
    return versions.size() == byName.size() ? version : Versions.ofView(versions);
  }

  /** See {@link Snapshot#servingAuthorities}; this one itself when nothing is left out. */
  TypeSnapshot servingAuthorities(Set<String> authorities) {
    // xdstp names sort together: only they are looked at.
    Set<String> dropped = new HashSet<>();
    for (String n : resources.subMap(XdstpName.SCHEME, "xdstp:/0").keySet()) {
      String authority = XdstpName.authorityOf(n);
      if (authority != null && !authorities.contains(authority)) {
        dropped.add(n);
      }
    }
    if (dropped.isEmpty()) {
      return this;
    }
    List<XdsResource> kept = new java.util.ArrayList<>(resources.size() - dropped.size());
    for (XdsResource r : list) {
      if (!dropped.contains(r.name())) {
        kept.add(r);
      }
    }
    return TypeSnapshot.of(kept);
  }

  /** Names added, removed or changed between {@code older} and this. */
  public Set<String> changedSince(TypeSnapshot older) {
    if (older == this) {
      return Set.of();
    }
    Set<String> changed = new HashSet<>();
    for (Map.Entry<String, XdsResource> e : resources.entrySet()) {
      XdsResource before = older.resources.get(e.getKey());
      if (before == null || !before.version().equals(e.getValue().version())) {
        changed.add(e.getKey());
      }
    }
    for (String name : older.resources.keySet()) {
      if (!resources.containsKey(name)) {
        changed.add(name);
      }
    }
    if (!byAlias.isEmpty() || !older.byAlias.isEmpty()) {
      // Clients may subscribe by alias (VHDS): a change is also a change of its aliases.
      for (String name : Set.copyOf(changed)) {
        for (TypeSnapshot s : List.of(this, older)) {
          XdsResource r = s.resources.get(name);
          if (r != null) {
            changed.addAll(r.aliases());
          }
        }
      }
    }
    return changed;
  }
}
