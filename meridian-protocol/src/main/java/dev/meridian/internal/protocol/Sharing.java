package dev.meridian.internal.protocol;

import java.lang.ref.WeakReference;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;

/**
 * What streams in the same state may share, kept apart from the protocol rules (issue 19): interned
 * subscription sets, and answers that every stream in sync with a snapshot would otherwise work out
 * alike. A hub owns one and hands it to its streams; nothing here is static, so two servers in one
 * JVM share nothing.
 *
 * <p>The rules ask it questions and must get the same outcomes whatever the implementation:
 * {@link #plain()} shares nothing and computes every answer afresh, {@link #interning()} shares.
 * The core's tests run every scenario with both and compare the bytes sent.
 */
public abstract class Sharing {
  Sharing() {}

  /** Shares nothing: no interning, no memo. Stateless, so one instance serves everyone. */
  public static Sharing plain() {
    return Plain.INSTANCE;
  }

  /** Interns large subscriptions and remembers shared answers; thread-safe. One per hub. */
  public static Sharing interning() {
    return new Interning();
  }

  /** An immutable set of names for a subscription: a copy, or the one equal set already shared. */
  abstract Set<String> names(Set<String> names);

  /** A large request's names (SotW resource_names, a Delta subscribe): as is, or shared. */
  abstract RequestNames request(List<String> requested);

  /** Whether every one of {@code names} is a resource of {@code snapshot}. */
  abstract boolean hasAll(TypeSnapshot snapshot, Set<String> names);

  /** {@link TypeSnapshot#viewVersion}: the version of what a subscription to {@code names} sees. */
  abstract String viewVersion(TypeSnapshot snapshot, Set<String> names);

  /** {@link Diff#toWhole}: from what a client holds to every resource of {@code snapshot}. */
  abstract Diff toWhole(VersionMap held, TypeSnapshot snapshot);

  /**
   * Whether, for a client whose view is the whole type, {@link #toWhole} is the cheaper way to the
   * diff of {@code dirty} changed names (the answers are the same: the names not dirty did not
   * change). Plain: never; interning: when many changed and the diff is shared.
   */
  abstract boolean prefersWhole(VersionMap held, int dirty);

  /** The warming bookkeeping of clusters just sent (see {@link Warming}). */
  abstract Warming warming(List<XdsResource> clusters, TypeSnapshot endpoints);

  /** Whether {@code names} are exactly the resource names of {@code snapshot}. */
  final boolean hasExactly(TypeSnapshot snapshot, Set<String> names) {
    return names.size() == snapshot.size() && hasAll(snapshot, names);
  }

  /** Every answer computed from its arguments alone. */
  private static final class Plain extends Sharing {
    static final Plain INSTANCE = new Plain();

    @Override
    Set<String> names(Set<String> names) {
      return Set.copyOf(names);
    }

    @Override
    RequestNames request(List<String> requested) {
      return new RequestNames(List.copyOf(requested), this);
    }

    @Override
    boolean hasAll(TypeSnapshot snapshot, Set<String> names) {
      return snapshot.hasAll(names);
    }

    @Override
    String viewVersion(TypeSnapshot snapshot, Set<String> names) {
      return snapshot.viewVersion(names);
    }

    @Override
    Diff toWhole(VersionMap held, TypeSnapshot snapshot) {
      return Diff.toWhole(held, snapshot);
    }

    @Override
    boolean prefersWhole(VersionMap held, int dirty) {
      return false;
    }

    @Override
    Warming warming(List<XdsResource> clusters, TypeSnapshot endpoints) {
      return new Warming(clusters, endpoints);
    }
  }

  /**
   * Sized for the fleet case: 1,000 clients subscribing the same 10,000 endpoint names hold one
   * set, and after a reload the first stream in sync with a snapshot works out what the others
   * then reuse. Answers about objects are recognized by identity: they are immutable and shared.
   */
  private static final class Interning extends Sharing {
    /** Smaller sets are cheap to keep per stream and rarely repeated across a fleet. */
    private static final int INTERN_FROM = 64;
    /** Equal sets → the one shared; weak, so a set no stream uses any more is released. */
    private final Map<Set<String>, WeakReference<Set<String>>> sets = new WeakHashMap<>();
    private final Map<List<String>, WeakReference<RequestNames>> requests = new WeakHashMap<>();
    private final IdentityMemo<List<XdsResource>, Warming> warmings = new IdentityMemo<>(2);
    /** This hub's memo of the empty snapshot, which is one for the JVM (see TypeSnapshot.memo). */
    private final TypeSnapshot.Memo emptyMemo = TypeSnapshot.empty().newMemo();

    private TypeSnapshot.Memo memo(TypeSnapshot snapshot) {
      TypeSnapshot.Memo m = snapshot.memo();
      return m != null ? m : emptyMemo;
    }

    @Override
    Set<String> names(Set<String> names) {
      if (names.size() < INTERN_FROM) {
        return Set.copyOf(names);
      }
      synchronized (sets) {
        WeakReference<Set<String>> ref = sets.get(names);
        Set<String> shared = ref == null ? null : ref.get();
        if (shared == null) {
          shared = Collections.unmodifiableSet(names);
          sets.put(shared, new WeakReference<>(shared));
        }
        return shared;
      }
    }

    @Override
    RequestNames request(List<String> requested) {
      synchronized (requests) {
        WeakReference<RequestNames> ref = requests.get(requested);
        RequestNames in = ref == null ? null : ref.get();
        if (in != null) {
          return in;
        }
      }
      // Built outside the lock (it interns its set, under the other one).
      RequestNames in = new RequestNames(List.copyOf(requested), this);
      synchronized (requests) {
        WeakReference<RequestNames> ref = requests.get(requested);
        RequestNames raced = ref == null ? null : ref.get();
        if (raced != null) {
          return raced;
        }
        requests.put(in.list, new WeakReference<>(in)); // the key lives as long as `in`
        return in;
      }
    }

    @Override
    boolean hasAll(TypeSnapshot snapshot, Set<String> names) {
      return names.size() < INTERN_FROM ? snapshot.hasAll(names) : memo(snapshot).hasAll(names);
    }

    @Override
    String viewVersion(TypeSnapshot snapshot, Set<String> names) {
      // A fleet subscribing to one large (interned) set: one hash per snapshot for all of them.
      return names.size() < INTERN_FROM ? snapshot.viewVersion(names)
          : memo(snapshot).viewVersion(names);
    }

    @Override
    Diff toWhole(VersionMap held, TypeSnapshot snapshot) {
      // A client in sync with a snapshot holds that snapshot's own map, as every client in sync
      // does: the diff from it is worked out once. (The empty map too: a first answer.)
      Map<String, String> base = held.sharedBase();
      return base == null ? Diff.toWhole(held, snapshot) : memo(snapshot).toWhole(base);
    }

    @Override
    boolean prefersWhole(VersionMap held, int dirty) {
      // After a reload every client in sync holds the same earlier map: one diff for all of them.
      return dirty >= INTERN_FROM && held.sharedBase() != null;
    }

    @Override
    Warming warming(List<XdsResource> clusters, TypeSnapshot endpoints) {
      Warming w = warmings.get(clusters);
      if (w == null || w.endpoints != endpoints) {
        w = new RememberingWarming(clusters, endpoints);
        warmings.put(clusters, w);
      }
      return w;
    }
  }

  /**
   * A {@link Warming} that remembers its answers for streams whose state is shared: the same
   * snapshot's map of ACKed clusters and the same (interned) endpoint subscription give the same
   * answer.
   */
  private static final class RememberingWarming extends Warming {
    private record Answer(Map<String, String> acked, boolean wildcard, Set<String> awaited) {}

    /** By endpoint subscription (its names set); a few, for streams that ask for different ones. */
    private final IdentityMemo<Set<String>, Answer> answers = new IdentityMemo<>(4);

    RememberingWarming(List<XdsResource> clusters, TypeSnapshot endpoints) {
      super(clusters, endpoints);
    }

    @Override
    Set<String> awaited(VersionMap acked, Subscription asked) {
      Map<String, String> shared = acked.sharedBase(); // null: this stream's own state
      Answer a = shared == null ? null : answers.get(asked.names());
      if (a != null && a.acked == shared && a.wildcard == asked.isWildcard()) {
        return a.awaited;
      }
      Set<String> result = super.awaited(acked, asked);
      if (shared != null) {
        answers.put(asked.names(), new Answer(shared, asked.isWildcard(), result));
      }
      return result;
    }
  }
}
