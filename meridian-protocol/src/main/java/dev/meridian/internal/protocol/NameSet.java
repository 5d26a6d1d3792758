package dev.meridian.internal.protocol;

import java.util.Collection;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Set;
import java.util.function.Predicate;

/**
 * A stream's set of names that can start out as a shared immutable set and copies itself on its
 * first write. After a reload that changed every cluster, the warming bookkeeping of 1,000 streams
 * ("resend these 10,000 endpoint sets when asked", "wait for them before routes") is one set,
 * not 1,000 copies. Not thread-safe, like the stream state that owns it.
 */
final class NameSet implements Iterable<String> {
  private Set<String> names = Set.of();
  private boolean owned;

  boolean isEmpty() {
    return names.isEmpty();
  }

  int size() {
    return names.size();
  }

  boolean contains(String name) {
    return names.contains(name);
  }

  void add(String name) {
    if (!names.contains(name)) {
      own();
      names.add(name);
    }
  }

  void addAll(Collection<String> more) {
    if (!more.isEmpty()) {
      own();
      names.addAll(more);
    }
  }

  /** Adds all of an immutable set that others share; an empty set becomes that set, uncopied. */
  void addShared(Set<String> shared) {
    if (names.isEmpty()) {
      names = shared;
      owned = false;
    } else {
      addAll(shared);
    }
  }

  void remove(String name) {
    if (names.contains(name)) {
      own();
      names.remove(name);
    }
  }

  void removeIf(Predicate<String> test) {
    for (String n : names) {
      if (test.test(n)) {
        own();
        names.removeIf(test);
        return;
      }
    }
  }

  void clear() {
    names = Set.of();
    owned = false;
  }

  /** Read-only iteration. */
  @Override
  public Iterator<String> iterator() {
    return java.util.Collections.unmodifiableSet(names).iterator();
  }

  private void own() {
    if (!owned) {
      names = new HashSet<>(names);
      owned = true;
    }
  }
}
