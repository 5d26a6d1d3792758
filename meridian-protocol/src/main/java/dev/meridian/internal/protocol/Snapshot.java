package dev.meridian.internal.protocol;

import dev.meridian.xds.ResourceType;

import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Immutable per node group: type → name → resource. A new config yields a new snapshot that shares
 * unchanged {@link XdsResource} instances with the old one.
 */
public final class Snapshot {
  private static final Snapshot EMPTY = new Snapshot(new EnumMap<>(ResourceType.class));

  private final Map<ResourceType, TypeSnapshot> types;

  private Snapshot(EnumMap<ResourceType, TypeSnapshot> types) {
    this.types = types;
  }

  public static Snapshot empty() {
    return EMPTY;
  }

  /** Groups the resources by type; duplicate names within a type are rejected. */
  public static Snapshot of(Collection<XdsResource> resources) {
    return of(resources, EMPTY);
  }

  /**
   * As {@link #of(Collection)}, keeping {@code previous}'s snapshot of every type whose resources
   * are the very same instances (a reload hands unchanged resources back as they were): a
   * one-cluster edit of 10,000 clusters then neither sorts nor re-versions the other type's
   * 10,000 resources, and the kept snapshot keeps what it has encoded.
   */
  public static Snapshot of(Collection<XdsResource> resources, Snapshot previous) {
    EnumMap<ResourceType, List<XdsResource>> byType = new EnumMap<>(ResourceType.class);
    for (XdsResource r : resources) {
      byType.computeIfAbsent(r.type(), t -> new ArrayList<>()).add(r);
    }
    EnumMap<ResourceType, TypeSnapshot> types = new EnumMap<>(ResourceType.class);
    byType.forEach((t, list) -> {
      TypeSnapshot before = previous.get(t);
      types.put(t, before.sameInstances(list) ? before : TypeSnapshot.of(list));
    });
    return new Snapshot(types);
  }

  public TypeSnapshot get(ResourceType type) {
    return types.getOrDefault(type, TypeSnapshot.empty());
  }

  /**
   * This snapshot without the xdstp-named resources of authorities not in {@code authorities}
   * (see {@link ServedConfig#servingAuthorities}); this one itself when none is left out.
   */
  public Snapshot servingAuthorities(Set<String> authorities) {
    if (authorities.isEmpty()) {
      return this;
    }
    EnumMap<ResourceType, TypeSnapshot> kept = null;
    for (Map.Entry<ResourceType, TypeSnapshot> e : types.entrySet()) {
      TypeSnapshot t = e.getValue().servingAuthorities(authorities);
      if (t != e.getValue()) {
        if (kept == null) {
          kept = new EnumMap<>(types);
        }
        kept.put(e.getKey(), t);
      }
    }
    return kept == null ? this : new Snapshot(kept);
  }

  public int size() {
    return types.values().stream().mapToInt(TypeSnapshot::size).sum();
  }

  /** Per type, the names that differ between {@code older} and this; types without change are absent. */
  public Map<ResourceType, Set<String>> changedSince(Snapshot older) {
    EnumMap<ResourceType, Set<String>> diff = new EnumMap<>(ResourceType.class);
    for (ResourceType t : ResourceType.values()) {
      TypeSnapshot now = get(t);
      TypeSnapshot before = older.get(t);
      if (!now.version().equals(before.version())) {
        diff.put(t, now.changedSince(before));
      }
    }
    return diff;
  }
}
