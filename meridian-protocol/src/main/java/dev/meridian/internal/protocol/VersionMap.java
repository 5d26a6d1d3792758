package dev.meridian.internal.protocol;

import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * An immutable name → version map for per-client bookkeeping (what a client was sent, holds,
 * ACKed) that shares structure: a shared base (typically a snapshot's own version map, the same
 * object for every client in sync) plus a small overlay of differences. A thousand clients holding
 * the same 10,000 resources cost one map, not a thousand.
 */
final class VersionMap {
  /** Overlay value marking a name removed from the base (compared by identity). */
  @SuppressWarnings("StringOperationCanBeSimplified")
  private static final String GONE = new String("<gone>");
  private static final int MIN_FLATTEN = 32;

  static final VersionMap EMPTY = new VersionMap(Map.of(), Map.of(), 0);

  private final Map<String, String> base;
  private final Map<String, String> overlay;
  private final int size;

  private VersionMap(Map<String, String> base, Map<String, String> overlay, int size) {
    this.base = base;
    this.overlay = overlay;
    this.size = size;
  }

  /** Wraps an immutable map without copying it; the caller must never change it. */
  static VersionMap shared(Map<String, String> immutable) {
    return immutable.isEmpty() ? EMPTY : new VersionMap(immutable, Map.of(), immutable.size());
  }

  String get(String name) {
    String v = overlay.get(name);
    if (v != null) {
      return v == GONE ? null : v;
    }
    return base.get(name);
  }

  boolean containsKey(String name) {
    return get(name) != null;
  }

  /** Whether every key satisfies {@code test} (stops at the first that does not). */
  boolean allKeys(java.util.function.Predicate<String> test) {
    for (Map.Entry<String, String> e : base.entrySet()) {
      String o = overlay.get(e.getKey());
      if (o == null && !test.test(e.getKey())) {
        return false;
      }
    }
    for (Map.Entry<String, String> e : overlay.entrySet()) {
      if (e.getValue() != GONE && !test.test(e.getKey())) {
        return false;
      }
    }
    return true;
  }

  int size() {
    return size;
  }

  boolean isEmpty() {
    return size == 0;
  }

  /** True if this is exactly {@code map}, shared (the cheap "in sync with the snapshot" test). */
  boolean isShared(Map<String, String> map) {
    return base == map && overlay.isEmpty();
  }

  /** The shared map this is exactly (no overlay), or null. */
  Map<String, String> sharedBase() {
    return overlay.isEmpty() ? base : null;
  }

  void forEach(BiConsumer<String, String> action) {
    if (overlay.isEmpty()) {
      base.forEach(action);
      return;
    }
    base.forEach((n, v) -> {
      if (!overlay.containsKey(n)) {
        action.accept(n, v);
      }
    });
    overlay.forEach((n, v) -> {
      if (v != GONE) {
        action.accept(n, v);
      }
    });
  }

  Set<String> keys() {
    Set<String> keys = new HashSet<>(size * 4 / 3 + 1);
    forEach((n, v) -> keys.add(n));
    return keys;
  }

  /** An immutable copy, for status reports. */
  Map<String, String> toMap() {
    if (overlay.isEmpty()) {
      return base;
    }
    Map<String, String> m = new HashMap<>(size * 4 / 3 + 1);
    forEach(m::put);
    return Collections.unmodifiableMap(m);
  }

  /** Equal content to {@code map}. */
  boolean sameAs(Map<String, String> map) {
    if (isShared(map)) {
      return true;
    }
    if (map.size() != size) {
      return false;
    }
    boolean[] same = {true};
    forEach((n, v) -> {
      if (same[0] && !v.equals(map.get(n))) {
        same[0] = false;
      }
    });
    return same[0];
  }

  /**
   * This map with {@code puts} put and {@code removes} removed (what a client runs once it ACKs a
   * response). When the response covered every key held, the result is {@code puts} itself.
   */
  VersionMap merge(VersionMap puts, java.util.List<String> removes,
      Map<String, String> candidate) {
    java.util.Collection<String> gone = removes.size() > 8 ? new HashSet<>(removes) : removes;
    if (puts.size() >= size - removes.size() && allKeys(removes.isEmpty() ? puts::containsKey
        : k -> puts.containsKey(k) || gone.contains(k))) {
      return puts; // it covered (or removed) every key held
    }
    Editor e = edit();
    puts.forEach(e::put);
    removes.forEach(e::remove);
    return e.commit(candidate);
  }

  /** This map with {@code diff} applied: its changed resources put, its gone names removed. */
  VersionMap with(Diff diff, TypeSnapshot snapshot) {
    if (diff.isEmpty()) {
      return this;
    }
    Editor e = edit();
    for (XdsResource r : diff.changed()) {
      e.put(r.name(), r.version());
    }
    diff.gone().forEach(e::remove);
    return e.commit(snapshot.versionMap());
  }

  Editor edit() {
    return new Editor();
  }

  /** Accumulates changes; {@link #commit} makes the new map. */
  final class Editor {
    private final Map<String, String> changes = new HashMap<>();
    private boolean cleared;

    Editor put(String name, String version) {
      changes.put(name, version);
      return this;
    }

    Editor remove(String name) {
      changes.put(name, GONE);
      return this;
    }

    Editor clear() {
      changes.clear();
      cleared = true;
      return this;
    }

    boolean isEmpty() {
      return changes.isEmpty() && !cleared;
    }

    VersionMap commit() {
      return commit(null);
    }

    /**
     * The edited map. When the overlay has grown and is folded into a new base, a result with the
     * same content as {@code candidate} (a snapshot's version map) shares it instead of a copy.
     */
    VersionMap commit(Map<String, String> candidate) {
      if (isEmpty()) {
        return VersionMap.this;
      }
      Map<String, String> b = cleared ? Map.of() : base;
      Map<String, String> o = new HashMap<>(cleared ? Map.of() : overlay);
      int n = cleared ? 0 : size;
      for (Map.Entry<String, String> e : changes.entrySet()) {
        String name = e.getKey();
        String old = o.get(name);
        boolean present = old != null ? old != GONE : b.containsKey(name);
        if (e.getValue() == GONE) {
          if (present) {
            n--;
          }
          if (b.containsKey(name)) {
            o.put(name, GONE);
          } else {
            o.remove(name);
          }
        } else {
          if (!present) {
            n++;
          }
          if (e.getValue().equals(b.get(name))) {
            o.remove(name); // back to the base's version
          } else {
            o.put(name, e.getValue());
          }
        }
      }
      if (o.isEmpty()) {
        return shared(b);
      }
      VersionMap next = new VersionMap(b, o, n);
      if (o.size() >= MIN_FLATTEN && o.size() * 4 >= b.size()) {
        if (candidate != null && next.sameAs(candidate)) {
          return shared(candidate);
        }
        return shared(next.toMap());
      }
      return next; // a small overlay: cheap to keep, checked against candidates when flattened
    }
  }
}
