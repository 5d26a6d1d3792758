package dev.meridian.protocol;

import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * What one (stream, type) is subscribed to: a wildcard (legacy or explicit {@code *}) and/or explicit
 * names. Spec "How the client specifies what resources to return": until the client has ever named a
 * resource (including {@code *}), an empty subscription means wildcard; afterwards it means nothing.
 */
public final class Subscription {
  public static final String WILDCARD = "*";

  private boolean everNamed;
  private String fingerprint;
  private boolean explicitWildcard;
  private final Set<String> names = new HashSet<>();

  /** The outcome of a subscription update: names newly of interest and names dropped. */
  public record Change(Set<String> added, Set<String> removed, boolean wildcardAdded,
      boolean wildcardRemoved) {
    static final Change NONE = new Change(Set.of(), Set.of(), false, false);

    public boolean isEmpty() {
      return added.isEmpty() && removed.isEmpty() && !wildcardAdded && !wildcardRemoved;
    }
  }

  /** SotW: each request carries the complete set of names. */
  public Change replace(List<String> requested) {
    boolean wasWildcard = isWildcard();
    Set<String> before = new HashSet<>(names);
    if (!requested.isEmpty()) {
      everNamed = true;
    }
    explicitWildcard = requested.contains(WILDCARD);
    names.clear();
    for (String n : requested) {
      if (!n.equals(WILDCARD)) {
        names.add(n);
      }
    }
    Set<String> added = new LinkedHashSet<>(names);
    added.removeAll(before);
    before.removeAll(names);
    return change(wasWildcard, added, before);
  }

  /** Incremental: names added and removed relative to the current subscription. */
  public Change update(Collection<String> subscribe, Collection<String> unsubscribe) {
    boolean wasWildcard = isWildcard();
    Set<String> added = new LinkedHashSet<>();
    Set<String> removed = new LinkedHashSet<>();
    if (!subscribe.isEmpty()) {
      everNamed = true;
    }
    for (String n : subscribe) {
      if (n.equals(WILDCARD)) {
        explicitWildcard = true;
      } else if (names.add(n)) {
        added.add(n);
      }
    }
    for (String n : unsubscribe) {
      if (n.equals(WILDCARD)) {
        explicitWildcard = false;
        everNamed = true; // unsubscribing from * leaves the legacy mode behind too
      } else if (names.remove(n)) {
        removed.add(n);
      }
    }
    // A name both subscribed and unsubscribed in one request ends unsubscribed.
    added.removeIf(n -> !names.contains(n));
    return change(wasWildcard, added, removed);
  }

  private Change change(boolean wasWildcard, Set<String> added, Set<String> removed) {
    boolean now = isWildcard();
    fingerprint = null;
    if (added.isEmpty() && removed.isEmpty() && wasWildcard == now) {
      return Change.NONE;
    }
    return new Change(Collections.unmodifiableSet(added), Collections.unmodifiableSet(removed),
        now && !wasWildcard, wasWildcard && !now);
  }

  /** A stable digest of what is subscribed (wildcard and names), cached until it changes. */
  public String fingerprint() {
    String f = fingerprint;
    if (f == null) {
      java.util.TreeMap<String, String> sorted = new java.util.TreeMap<>();
      for (String n : names) {
        sorted.put(n, "");
      }
      sorted.put("\u0000wildcard", isWildcard() ? "1" : "0");
      fingerprint = f = Versions.ofView(sorted);
    }
    return f;
  }

  public boolean isWildcard() {
    return explicitWildcard || !everNamed;
  }

  public boolean isLegacyWildcard() {
    return !everNamed;
  }

  /** Explicit names (without {@code *}). */
  public Set<String> names() {
    return Collections.unmodifiableSet(names);
  }

  public boolean covers(String name) {
    return isWildcard() || names.contains(name);
  }

  public boolean isExplicit(String name) {
    return names.contains(name);
  }
}
