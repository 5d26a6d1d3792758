package dev.meridian.internal.server;

import java.util.concurrent.ConcurrentHashMap;

/** What each peer holds, at most {@code max} each; a peer holding nothing has no entry. */
final class PeerCounts {
  private final int max;
  private final ConcurrentHashMap<String, Integer> counts = new ConcurrentHashMap<>();

  PeerCounts(int max) {
    this.max = max;
  }

  /** Takes one for {@code peer}; false, and nothing taken, when it holds its maximum. */
  boolean take(String peer) {
    boolean[] taken = {false};
    counts.compute(peer, (k, n) -> {
      int held = n == null ? 0 : n;
      if (held >= max) {
        return n;
      }
      taken[0] = true;
      return held + 1;
    });
    return taken[0];
  }

  void giveBack(String peer) {
    counts.computeIfPresent(peer, (k, n) -> n <= 1 ? null : n - 1);
  }

  /** What {@code peer} holds now. */
  int held(String peer) {
    return counts.getOrDefault(peer, 0);
  }

  int max() {
    return max;
  }
}
