package dev.meridian.protocol;

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
    TreeMap<String, String> versions = new TreeMap<>();
    resources.forEach((n, r) -> versions.put(n, r.version()));
    this.version = Versions.ofView(versions);
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

  /** By name, or else by alias (VHDS subscribes virtual hosts by alias). */
  public XdsResource resolve(String nameOrAlias) {
    XdsResource r = resources.get(nameOrAlias);
    return r != null ? r : byAlias.get(nameOrAlias);
  }

  public SortedMap<String, XdsResource> resources() {
    return resources;
  }

  public int size() {
    return resources.size();
  }

  private volatile Map<String, String> versionMap;
  private volatile List<com.google.protobuf.Any> anys;
  private volatile List<io.envoyproxy.envoy.service.discovery.v3.Resource> wrapped;
  private volatile List<io.envoyproxy.envoy.service.discovery.v3.Resource> wrappedNoTtl;

  /** Every resource as Delta carries it, in name order, built once: a whole-type Delta response. */
  public List<io.envoyproxy.envoy.service.discovery.v3.Resource> wrapped(boolean withTtl) {
    List<io.envoyproxy.envoy.service.discovery.v3.Resource> w = withTtl ? wrapped : wrappedNoTtl;
    if (w == null) {
      w = resources.values().stream().map(r -> r.wrapped(withTtl)).toList();
      if (withTtl) {
        wrapped = w;
      } else {
        wrappedNoTtl = w;
      }
    }
    return w;
  }

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

  /** Every resource's Any, in name order, built once: a full-state response's body. */
  public List<com.google.protobuf.Any> anys() {
    List<com.google.protobuf.Any> a = anys;
    if (a == null) {
      anys = a = resources.values().stream().map(XdsResource::any).toList();
    }
    return a;
  }

  /** Recent large name sets asked about in {@link #hasAll}, with the answers (sets are interned). */
  private final Object[][] hasAllMemo = new Object[4][];
  private int hasAllNext;

  /** Whether every one of {@code names} is a resource here; O(1) again for the same (shared) set. */
  public boolean hasAll(Set<String> names) {
    if (names.size() > byName.size()) {
      return false;
    }
    boolean large = names.size() >= 64;
    if (large) {
      synchronized (hasAllMemo) {
        for (Object[] m : hasAllMemo) {
          if (m != null && m[0] == names) {
            return (Boolean) m[1];
          }
        }
      }
    }
    boolean all = true;
    for (String n : names) {
      if (!byName.containsKey(n)) {
        all = false;
        break;
      }
    }
    if (large) {
      synchronized (hasAllMemo) {
        hasAllMemo[hasAllNext] = new Object[] {names, all};
        hasAllNext = (hasAllNext + 1) % hasAllMemo.length;
      }
    }
    return all;
  }

  /** Recent answers of {@link #changedFrom}, by the identity of the older map. */
  private final Object[][] changedFromMemo = new Object[2][];
  private int changedFromNext;

  /**
   * The resources whose version differs from {@code older} (a version map shared by the clients
   * that were in sync with an earlier snapshot), in name order. Every such client asks the same
   * question after a reload, so the answer is computed once and shared.
   */
  public List<XdsResource> changedFrom(Map<String, String> older) {
    synchronized (changedFromMemo) {
      for (Object[] m : changedFromMemo) {
        if (m != null && m[0] == older) {
          @SuppressWarnings("unchecked")
          List<XdsResource> hit = (List<XdsResource>) m[1];
          return hit;
        }
      }
    }
    List<XdsResource> changed = new java.util.ArrayList<>();
    for (XdsResource r : resources.values()) {
      if (!r.version().equals(older.get(r.name()))) {
        changed.add(r);
      }
    }
    List<XdsResource> result = List.copyOf(changed);
    synchronized (changedFromMemo) {
      changedFromMemo[changedFromNext] = new Object[] {older, result};
      changedFromNext = (changedFromNext + 1) % changedFromMemo.length;
    }
    return result;
  }

  /** Recent answers of {@link #removedFrom}, by the identity of the older map. */
  private final Object[][] removedFromMemo = new Object[2][];
  private int removedFromNext;

  /** Names of {@code older} (see {@link #changedFrom}) that are not resources here, in order. */
  public List<String> removedFrom(Map<String, String> older) {
    synchronized (removedFromMemo) {
      for (Object[] m : removedFromMemo) {
        if (m != null && m[0] == older) {
          @SuppressWarnings("unchecked")
          List<String> hit = (List<String>) m[1];
          return hit;
        }
      }
    }
    java.util.TreeSet<String> gone = new java.util.TreeSet<>();
    for (String n : older.keySet()) {
      if (!byName.containsKey(n)) {
        gone.add(n);
      }
    }
    List<String> result = List.copyOf(gone);
    synchronized (removedFromMemo) {
      removedFromMemo[removedFromNext] = new Object[] {older, result};
      removedFromNext = (removedFromNext + 1) % removedFromMemo.length;
    }
    return result;
  }

  /** Whether {@code names} are exactly this snapshot's resource names. */
  public boolean hasExactly(Set<String> names) {
    return names.size() == byName.size() && hasAll(names);
  }

  /** The view-version of all resources of this type (see {@link Versions#ofView}). */
  public String version() {
    return version;
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
