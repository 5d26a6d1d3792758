package dev.meridian.internal.protocol;

import java.util.List;
import java.util.Set;

/**
 * The names of one large request (SotW resource_names, a Delta subscribe) as a subscription keeps
 * them: the list in the client's order, the set without {@code *}, and the subscription's
 * fingerprint. An interning {@link Sharing} hands every client that sends the same list the same
 * instance, so their fingerprints are computed once.
 */
final class RequestNames {
  final List<String> list;
  final Set<String> set;
  final boolean star;
  private volatile String fingerprintNamed;
  private volatile String fingerprintWildcard;
  private volatile Set<String> globs;

  RequestNames(List<String> list, Sharing sharing) {
    this.list = list;
    this.set = Subscription.withoutWildcard(list, sharing);
    this.star = list.contains(Subscription.WILDCARD);
  }

  /**
   * The glob collections among the names (TP1 "Glob"), worked out once per list: clients sharing
   * this instance share the walk over their 10,000 names.
   */
  Set<String> globs() {
    Set<String> g = globs;
    if (g == null) {
      globs = g = Subscription.globsOf(list);
    }
    return g;
  }

  String fingerprint(boolean wildcard) {
    String f = wildcard ? fingerprintWildcard : fingerprintNamed;
    if (f == null) {
      f = Subscription.fingerprint(set, wildcard);
      if (wildcard) {
        fingerprintWildcard = f;
      } else {
        fingerprintNamed = f;
      }
    }
    return f;
  }
}
