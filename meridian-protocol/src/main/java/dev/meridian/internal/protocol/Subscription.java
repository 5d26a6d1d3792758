package dev.meridian.internal.protocol;

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

  /** Interns large name sets (or not: the rules hold either way). */
  private final Sharing sharing;
  private boolean everNamed;
  private String fingerprint;
  /** The glob collections among {@link #names}; null: not worked out since they changed. */
  private Set<String> globs;
  private boolean explicitWildcard;
  /** Immutable; an interning Sharing gives clients subscribing to the same names one set. */
  private Set<String> names = Set.of();
  /**
   * SotW, large subscriptions: the last request's names in its order, so the usual ACK, which
   * repeats them in the same order, is recognized by a walk that compares strings in place
   * instead of 10,000 hash lookups.
   */
  private List<String> lastRequest;
  /**
   * The large request whose set the current names are, if any: clients sharing it share its
   * fingerprint and glob walk. Only used while {@code namesOf.set == names}.
   */
  private RequestNames namesOf;
  /** From this size a request's names go through {@link Sharing#request}. */
  private static final int LARGE = 64;

  public Subscription(Sharing sharing) {
    this.sharing = java.util.Objects.requireNonNull(sharing, "sharing");
  }

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
    if (unchanged(requested)) {
      return Change.NONE; // the usual ACK: same names again, nothing to allocate
    }
    // TP1 "Normalization": an xdstp name matches by its canonical form. (After the check above:
    // an ACK repeating canonical names parses none of them.)
    List<String> canonical = XdstpName.canonicalize(requested);
    if (canonical != requested && unchanged(canonical)) {
      return Change.NONE;
    }
    requested = canonical;
    boolean wasWildcard = isWildcard();
    Set<String> before = names;
    if (!requested.isEmpty()) {
      everNamed = true;
    }
    if (requested.size() >= LARGE) {
      // Clients with the same large subscription may share its list, set and fingerprint.
      RequestNames in = sharing.request(requested);
      lastRequest = in.list;
      namesOf = in;
      explicitWildcard = in.star;
      names = in.set;
    } else {
      lastRequest = null;
      namesOf = null;
      explicitWildcard = requested.contains(WILDCARD);
      names = withoutWildcard(requested, sharing);
    }
    if (before.isEmpty() || names.isEmpty()) {
      return change(wasWildcard, names, before); // all new, or all gone: no set to build
    }
    Set<String> added = new LinkedHashSet<>();
    for (String n : names) {
      if (!before.contains(n)) {
        added.add(n);
      }
    }
    Set<String> removed = new LinkedHashSet<>();
    for (String n : before) {
      if (!names.contains(n)) {
        removed.add(n);
      }
    }
    return change(wasWildcard, added, removed);
  }

  static Set<String> withoutWildcard(List<String> requested, Sharing sharing) {
    Set<String> next = new HashSet<>(requested.size() * 4 / 3 + 1);
    for (String n : requested) {
      if (!n.equals(WILDCARD)) {
        next.add(n);
      }
    }
    return sharing.names(next);
  }

  private boolean unchanged(List<String> requested) {
    if (requested.isEmpty()) {
      return !everNamed || (names.isEmpty() && !explicitWildcard);
    }
    if (!everNamed) {
      return false;
    }
    List<String> last = lastRequest;
    if (last != null && last.size() == requested.size() && sameInOrder(last, requested)) {
      return true;
    }
    boolean star = false;
    Set<String> distinct = new HashSet<>(); // a name may be repeated: count each once
    for (String n : requested) {
      if (n.equals(WILDCARD)) {
        star = true;
      } else if (!names.contains(n)) {
        return false;
      } else {
        distinct.add(n);
      }
    }
    return star == explicitWildcard && distinct.size() == names.size();
  }

  private static boolean sameInOrder(List<String> last, List<String> requested) {
    int i = 0;
    for (String n : requested) {
      String before = last.get(i++);
      if (!before.equals(n)) {
        return false;
      }
    }
    return true;
  }

  /**
   * Incremental: names added and removed relative to the current subscription. The names come in
   * canonical form (TP1 "Normalization"): the Delta type state canonicalizes a request once, for
   * this and for its own bookkeeping.
   */
  public Change update(Collection<String> subscribe, Collection<String> unsubscribe) {
    boolean wasWildcard = isWildcard();
    Set<String> added = new LinkedHashSet<>();
    Set<String> removed = new LinkedHashSet<>();
    if (!subscribe.isEmpty()) {
      everNamed = true;
    }
    if (subscribe.isEmpty() && unsubscribe.isEmpty()) {
      return Change.NONE; // an ACK: nothing to copy
    }
    if (unsubscribe.isEmpty() && subscribe.size() >= LARGE
        && subscribe instanceof List<String> list) {
      RequestNames in = sharing.request(list);
      if (in.set == this.names && (!in.star || explicitWildcard)) {
        return Change.NONE; // all of it subscribed already (the same shared set: the same names)
      }
      if (this.names.isEmpty() && !explicitWildcard) {
        // A first large subscription (a Delta client naming every EDS resource): clients that
        // subscribe the same list may share its set; nothing to diff against.
        this.names = in.set;
        namesOf = in;
        explicitWildcard = in.star;
        lastRequest = null;
        return change(wasWildcard, in.set, Set.of());
      }
    }
    Set<String> names = new HashSet<>(this.names);
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
    if (!added.isEmpty() || !removed.isEmpty()) {
      this.names = sharing.names(names);
      namesOf = null;
    }
    lastRequest = null;
    return change(wasWildcard, added, removed);
  }

  private Change change(boolean wasWildcard, Set<String> added, Set<String> removed) {
    boolean now = isWildcard();
    fingerprint = null;
    globs = null;
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
      RequestNames in = namesOf != null && namesOf.set == names ? namesOf : null;
      fingerprint = f = in != null ? in.fingerprint(isWildcard()) : fingerprint(names, isWildcard());
    }
    return f;
  }

  static String fingerprint(Set<String> names, boolean wildcard) {
    java.util.TreeMap<String, String> sorted = new java.util.TreeMap<>();
    for (String n : names) {
      sorted.put(n, "");
    }
    sorted.put("\u0000wildcard", wildcard ? "1" : "0");
    return Versions.ofView(sorted);
  }

  public boolean isWildcard() {
    return explicitWildcard || !everNamed;
  }

  public boolean isLegacyWildcard() {
    return !everNamed;
  }

  /** Explicit names (without {@code *}). */
  public Set<String> names() {
    return names; // immutable
  }

  public boolean covers(String name) {
    return isWildcard() || names.contains(name) || inCollection(name);
  }

  /**
   * Whether {@code name} is covered other than by being named: by the wildcard, or as a member
   * of a subscribed glob collection (TP1 "Glob").
   */
  public boolean coversUnnamed(String name) {
    return isWildcard() || inCollection(name);
  }

  /** Whether {@code name} is a member of a subscribed glob collection (TP1 "Glob"). */
  public boolean inCollection(String name) {
    if (!hasGlobs() || !XdstpName.isXdstp(name)) {
      return false;
    }
    String collection = XdstpName.collectionOf(name);
    return collection != null && names.contains(collection);
  }

  /** The subscribed glob collections (TP1 "Glob"), canonical; cached until the names change. */
  public Set<String> globs() {
    Set<String> g = globs;
    if (g == null) {
      RequestNames in = namesOf;
      globs = g = in != null && in.set == names ? in.globs() : globsOf(names);
    }
    return g;
  }

  static Set<String> globsOf(Collection<String> names) {
    Set<String> found = null;
    for (String n : names) {
      if (XdstpName.isGlob(n)) {
        if (found == null) {
          found = new java.util.TreeSet<>();
        }
        found.add(n);
      }
    }
    return found == null ? Set.of() : Collections.unmodifiableSet(found);
  }

  public boolean hasGlobs() {
    return !globs().isEmpty();
  }

  /** Names that stand for a resource (not a glob collection), for does-not-exist. */
  public boolean isExplicitResource(String name) {
    return names.contains(name) && !(hasGlobs() && globs.contains(name));
  }

  public boolean isExplicit(String name) {
    return names.contains(name);
  }
}
