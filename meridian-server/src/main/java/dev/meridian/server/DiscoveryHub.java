package dev.meridian.server;

import dev.meridian.protocol.ResourceType;
import dev.meridian.protocol.ServedConfig;
import dev.meridian.protocol.Sharing;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Holds the served config and the connected streams. A new config is diffed once per group, then
 * each stream is handed the diff on its own serial executor; no stream is touched under a lock.
 */
public final class DiscoveryHub {
  /** A connected stream, notified of config changes. */
  interface Listener {
    void onConfig(ServedConfig config, Map<String, Map<ResourceType, Set<String>>> changes);

    /**
     * As {@link #onConfig}, but the caller is a fan-out worker that may do the work itself: a
     * stream that is idle pushes on the calling thread instead of handing off to its executor.
     */
    default void onConfigHere(ServedConfig config,
        Map<String, Map<ResourceType, Set<String>>> changes) {
      onConfig(config, changes);
    }

    /** Time passed: send the heartbeats that are due, end bounded waits. */
    void onTick(ServedConfig config);

    /** Whether this stream needs ticks even when no resource has a TTL. */
    default boolean wantsTick() {
      return false;
    }
  }

  private final AtomicReference<ServedConfig> current = new AtomicReference<>(ServedConfig.empty());
  private final Set<Listener> streams = ConcurrentHashMap.newKeySet();
  private volatile boolean loaded;
  /** Connected streams as operators see them (admin HTTP, CSDS, metrics, shutdown). */
  private final StreamRegistry registry = new StreamRegistry();
  /** Below this many streams a config change is handed out from the updating thread alone. */
  private static final int FAN_OUT_FROM = 256;
  private final int fanOutFrom;
  private volatile Executor fanOut;
  private volatile int fanOutWays = 1;
  private final Metrics metrics = new Metrics();
  /** This hub's streams share interned subscriptions and answers; other hubs' never do. */
  private final Sharing sharing = Sharing.interning();
  /** False for the warm-up's private hub: its synthetic streams are not worth a log line each. */
  private final boolean logsStreams;

  public DiscoveryHub() {
    this(true, FAN_OUT_FROM);
  }

  private DiscoveryHub(boolean logsStreams, int fanOutFrom) {
    this.logsStreams = logsStreams;
    this.fanOutFrom = fanOutFrom;
  }

  /**
   * The warm-up's private hub: new and empty, on this hub's fan-out pool, but its streams log no
   * open and close lines, and it fans out from its first stream: the warm-up's 200 synthetic
   * streams then run the path a fleet of thousands takes (below {@link #FAN_OUT_FROM} they would
   * not, and the fleet's first pushes compiled it).
   */
  DiscoveryHub warmupSibling() {
    DiscoveryHub h = new DiscoveryHub(false, 1);
    h.fanOut = fanOut;
    h.fanOutWays = fanOutWays;
    return h;
  }

  boolean logsStreams() {
    return logsStreams;
  }

  /** What the streams of this hub share (see {@link Sharing}). */
  public Sharing sharing() {
    return sharing;
  }

  public ServedConfig current() {
    return current.get();
  }

  public boolean isLoaded() {
    return loaded;
  }

  /** Serves {@code next} from now on; returns the number of changed resources across groups. */
  public synchronized int update(ServedConfig next) {
    ServedConfig previous = current.getAndSet(next);
    loaded = true;
    Map<String, Map<ResourceType, Set<String>>> changes = new HashMap<>();
    int changed = 0;
    for (String group : next.groupNames()) {
      Map<ResourceType, Set<String>> diff = next.snapshot(group).changedSince(previous.snapshot(group));
      if (!diff.isEmpty()) {
        changes.put(group, diff);
        changed += diff.values().stream().mapToInt(Set::size).sum();
      }
    }
    for (String group : previous.groupNames()) {
      if (!changes.containsKey(group) && next.snapshot(group) != previous.snapshot(group)) {
        Map<ResourceType, Set<String>> diff = next.snapshot(group).changedSince(previous.snapshot(group));
        if (!diff.isEmpty()) {
          changes.put(group, diff); // the group was removed: its streams re-evaluate their group
        }
      }
    }
    boolean groupsChanged = !previous.groups().stream().map(g -> g.name() + g.matcher())
        .toList().equals(next.groups().stream().map(g -> g.name() + g.matcher()).toList());
    if (changes.isEmpty() && !groupsChanged) {
      return 0; // identical content: nothing is sent to anyone
    }
    dispatch(next, changes);
    return changed;
  }

  /**
   * Hands a config change to many streams from a few pool tasks, each pushing to a chunk of
   * streams itself ({@link Listener#onConfigHere}): no thread hand-off per stream, and the pool's
   * threads still share the work. Used by {@link MeridianServer}; without it every stream gets
   * the change through its own executor.
   */
  void fanOutOn(Executor pool, int ways) {
    this.fanOutWays = Math.max(1, ways);
    this.fanOut = pool;
  }

  private void dispatch(ServedConfig next, Map<String, Map<ResourceType, Set<String>>> changes) {
    Executor pool = fanOut;
    if (pool == null || streams.size() < fanOutFrom) {
      for (Listener s : streams) {
        s.onConfig(next, changes);
      }
      return;
    }
    List<Listener> all = new ArrayList<>(streams);
    int ways = Math.min(fanOutWays, all.size());
    int per = (all.size() + ways - 1) / ways;
    CountDownLatch done = new CountDownLatch(ways);
    for (int w = 0; w < ways; w++) {
      List<Listener> chunk = all.subList(w * per, Math.min(all.size(), (w + 1) * per));
      try {
        pool.execute(() -> {
          try {
            chunk.forEach(s -> s.onConfigHere(next, changes));
          } finally {
            done.countDown();
          }
        });
      } catch (RejectedExecutionException e) {
        chunk.forEach(s -> s.onConfig(next, changes)); // shutting down: queue, as without fan-out
        done.countDown();
      }
    }
    awaitUninterruptibly(done);
  }

  /**
   * Waits until every stream has the change in hand: the next update (update is synchronized)
   * must not reach a stream before this one does.
   */
  private static void awaitUninterruptibly(CountDownLatch done) {
    boolean interrupted = false;
    while (true) {
      try {
        done.await();
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** Lets streams send due heartbeats (while any resource has a TTL) and end bounded waits. */
  public void tick() {
    ServedConfig config = current.get();
    boolean ttl = hasTtl(config);
    for (Listener s : streams) {
      if (ttl || s.wantsTick()) {
        s.onTick(config);
      }
    }
  }

  private volatile ServedConfig ttlCheckedFor;
  private volatile boolean ttlPresent;

  private boolean hasTtl(ServedConfig config) {
    if (ttlCheckedFor != config) {
      boolean any = false;
      for (String g : config.groupNames()) {
        for (ResourceType t : ResourceType.values()) {
          for (var r : config.snapshot(g).get(t).resources().values()) {
            if (r.ttl() != null) {
              any = true;
              break;
            }
          }
        }
      }
      ttlPresent = any;
      ttlCheckedFor = config;
    }
    return ttlPresent;
  }

  void register(Listener stream) {
    streams.add(stream);
  }

  void unregister(Listener stream) {
    streams.remove(stream);
  }

  public StreamRegistry registry() {
    return registry;
  }

  public Metrics metrics() {
    return metrics;
  }

  public int streamCount() {
    return streams.size();
  }
}
