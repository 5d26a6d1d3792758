package dev.meridian.internal.protocol;

import java.util.ArrayList;
import java.util.List;

/**
 * What separates what a client holds of a type from what it should hold: the resources whose
 * version it lacks, and the names it holds that are gone. Both in name order, so that equal states
 * send equal bytes.
 */
record Diff(List<XdsResource> changed, List<String> gone) {
  static final Diff NONE = new Diff(List.of(), List.of());

  /** Version meaning "not held" (Delta: told that it does not exist). */
  static final String NOT_HELD = "";

  boolean isEmpty() {
    return changed.isEmpty() && gone.isEmpty();
  }

  /**
   * From {@code held} (name → version) to every resource of {@code snapshot}: the diff of a client
   * whose view is the whole type (a wildcard, or names that are exactly the type's).
   */
  static Diff toWhole(VersionMap held, TypeSnapshot snapshot) {
    List<XdsResource> changed = new ArrayList<>();
    for (XdsResource r : snapshot.list()) {
      if (!r.version().equals(held.get(r.name()))) {
        changed.add(r);
      }
    }
    List<String> gone = new ArrayList<>();
    held.forEach((n, v) -> {
      if (!v.equals(NOT_HELD) && snapshot.get(n) == null) {
        gone.add(n);
      }
    });
    gone.sort(null);
    // Immutable: an interning Sharing hands the same Diff to many streams.
    return new Diff(changed.size() == snapshot.size() ? snapshot.list() : List.copyOf(changed),
        List.copyOf(gone));
  }

  /** Whether {@code changed} is every resource of {@code snapshot} (its own list). */
  boolean changesWhole(TypeSnapshot snapshot) {
    return changed == snapshot.list() && !changed.isEmpty();
  }
}
