package dev.meridian.internal.server;

import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.XdsStream.Interest;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The hub's streams by group, and per type by subscribed name and wildcard (DESIGN "Fan-out"), so
 * that a config change is handed only to the streams it concerns ({@link Interest#concerns}).
 *
 * <p>Each stream publishes its own {@link Interest} from its serial executor, so the entries of one
 * stream are never written concurrently; streams and the updating thread meet only in concurrent
 * maps and sets. A reader may see a stream's interest half moved; the stream makes up for that
 * (see {@link StreamHandler}): after publishing, it checks whether the config moved on meanwhile.
 */
final class StreamIndex {
  /** From this many names a subscription is scanned (often one shared set), not indexed by name. */
  static final int LARGE = 64;

  /** Listeners that do not publish an interest (REST polls, file publisher), or want everything. */
  private final Set<DiscoveryHub.Listener> everything = ConcurrentHashMap.newKeySet();
  private final Map<DiscoveryHub.Listener, Interest> published = new ConcurrentHashMap<>();
  private final Map<String, Map<ResourceType, ByType>> groups = new ConcurrentHashMap<>();

  /** One (group, type): who subscribes to what. */
  private static final class ByType {
    final Set<DiscoveryHub.Listener> wildcard = ConcurrentHashMap.newKeySet();
    final Map<String, Set<DiscoveryHub.Listener>> byName = new ConcurrentHashMap<>();
    final Map<DiscoveryHub.Listener, Set<String>> large = new ConcurrentHashMap<>();
  }

  /** A listener handed every change. */
  void addEverything(DiscoveryHub.Listener l) {
    everything.add(l);
  }

  /**
   * Records {@code l}'s interest, replacing the one it published before; returns whether it
   * changed. New entries go in before old ones go out: a reader meanwhile sees the stream twice
   * (harmless: it is handed a change it then finds nothing in), never nowhere it is subscribed.
   */
  boolean publish(DiscoveryHub.Listener l, Interest next) {
    Interest before = published.getOrDefault(l, Interest.NONE);
    if (before == next) {
      return false;
    }
    if (next == Interest.NONE) {
      published.remove(l);
    } else {
      published.put(l, next);
    }
    add(l, next);
    remove(l, before, next);
    return true;
  }

  /** Forgets {@code l}. */
  void remove(DiscoveryHub.Listener l) {
    everything.remove(l);
    publish(l, Interest.NONE);
  }

  private void add(DiscoveryHub.Listener l, Interest i) {
    if (i.everything()) {
      everything.add(l);
    }
    if (i.group() == null) {
      return;
    }
    Map<ResourceType, ByType> g = groups.computeIfAbsent(i.group(), k -> new ConcurrentHashMap<>());
    for (var e : i.types().entrySet()) {
      ByType t = g.computeIfAbsent(e.getKey(), k -> new ByType());
      Interest.Names n = e.getValue();
      if (n.wildcard()) {
        t.wildcard.add(l);
      }
      if (n.names().size() >= LARGE) {
        t.large.put(l, n.names());
      } else {
        for (String name : n.names()) {
          // Inside compute: a set that another stream's removal empties and drops meanwhile
          // must not swallow this entry.
          t.byName.compute(name, (k, s) -> {
            Set<DiscoveryHub.Listener> set = s != null ? s : ConcurrentHashMap.newKeySet();
            set.add(l);
            return set;
          });
        }
      }
    }
  }

  /** Removes the entries of {@code old} that {@code now} does not have. */
  private void remove(DiscoveryHub.Listener l, Interest old, Interest now) {
    if (old.everything() && !now.everything()) {
      everything.remove(l);
    }
    if (old.group() == null) {
      return;
    }
    Map<ResourceType, ByType> g = groups.get(old.group());
    if (g == null) {
      return;
    }
    boolean sameGroup = old.group().equals(now.group());
    for (var e : old.types().entrySet()) {
      ByType t = g.get(e.getKey());
      Interest.Names was = e.getValue();
      Interest.Names is = sameGroup ? now.types().get(e.getKey()) : null;
      if (was.wildcard() && (is == null || !is.wildcard())) {
        t.wildcard.remove(l);
      }
      if (was.names().size() >= LARGE) {
        if (is == null || is.names().size() < LARGE) {
          t.large.remove(l);
        }
      } else {
        Set<String> keep = is == null || is.names().size() >= LARGE ? Set.of() : is.names();
        for (String name : was.names()) {
          if (!keep.contains(name)) {
            // Atomic per name: a set emptied here is dropped unless another stream joined it.
            t.byName.computeIfPresent(name, (k, s) -> s.remove(l) && s.isEmpty() ? null : s);
          }
        }
      }
    }
  }

  /** Whether any stream of {@code group} subscribes to {@code type}, by name or wildcard. */
  boolean subscribed(String group, ResourceType type) {
    Map<ResourceType, ByType> g = groups.get(group);
    ByType t = g == null ? null : g.get(type);
    return t != null && (!t.wildcard.isEmpty() || !t.byName.isEmpty() || !t.large.isEmpty());
  }

  /** The listeners a change of {@code changes} (group → type → names) concerns. */
  List<DiscoveryHub.Listener> concerned(Map<String, Map<ResourceType, Set<String>>> changes) {
    Set<DiscoveryHub.Listener> out = new HashSet<>(everything);
    for (var byGroup : changes.entrySet()) {
      Map<ResourceType, ByType> g = groups.get(byGroup.getKey());
      if (g == null) {
        continue;
      }
      for (var change : byGroup.getValue().entrySet()) {
        ByType t = g.get(change.getKey());
        if (t == null) {
          continue;
        }
        Set<String> names = change.getValue();
        out.addAll(t.wildcard);
        if (!t.byName.isEmpty()) {
          for (String n : names) {
            Set<DiscoveryHub.Listener> s = t.byName.get(n);
            if (s != null) {
              out.addAll(s);
            }
          }
        }
        for (var e : t.large.entrySet()) {
          if (!out.contains(e.getKey()) && intersects(e.getValue(), names)) {
            out.add(e.getKey());
          }
        }
      }
    }
    return new ArrayList<>(out);
  }

  private static boolean intersects(Set<String> a, Collection<String> b) {
    for (String n : b) {
      if (a.contains(n)) {
        return true;
      }
    }
    return false;
  }
}
