package dev.meridian.internal.server;

import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.internal.protocol.Sharing;
import dev.meridian.internal.protocol.XdsStream.Interest;
import io.envoyproxy.envoy.config.core.v3.ControlPlane;
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
 * each stream the diff concerns (found in a {@link StreamIndex}) is handed it on its own serial
 * executor; no stream is touched under a lock.
 */
public final class DiscoveryHub {
  /**
   * A served config, numbered: the generation orders configs for a stream that meets them both
   * through a push and through its own reads of {@link #served()}.
   */
  record Served(ServedConfig config, long generation) {}

  /** A connected stream, notified of config changes. */
  interface Listener {
    /**
     * The served config is now {@code config}, number {@code generation}; {@code changes} maps
     * group → type → the names changed since the config before it.
     */
    void onConfig(ServedConfig config, Map<String, Map<ResourceType, Set<String>>> changes,
        long generation);

    /**
     * As {@link #onConfig}, but the caller is a fan-out worker that may do the work itself: a
     * stream that is idle pushes on the calling thread instead of handing off to its executor.
     */
    default void onConfigHere(ServedConfig config,
        Map<String, Map<ResourceType, Set<String>>> changes, long generation) {
      onConfig(config, changes, generation);
    }

    /** Time passed: send the heartbeats that are due, end bounded waits. */
    void onTick(ServedConfig config);

    /** Whether this stream needs ticks even when no resource has a TTL. */
    default boolean wantsTick() {
      return false;
    }
  }

  private final AtomicReference<Served> current =
      new AtomicReference<>(new Served(ServedConfig.empty(), 0));
  private final Set<Listener> streams = ConcurrentHashMap.newKeySet();
  /** Which streams a change concerns (DESIGN "Fan-out"). */
  private final StreamIndex index = new StreamIndex();
  private volatile boolean loaded;
  /** Connected streams as operators see them (admin HTTP, CSDS, metrics, shutdown). */
  private final StreamRegistry registry = new StreamRegistry();
  /** Below this many streams a config change is handed out from the updating thread alone. */
  private static final int FAN_OUT_FROM = 256;
  private volatile Executor fanOut;
  private volatile int fanOutWays = 1;
  private final Metrics metrics = new Metrics(registry, this::current);
  /** The last reload and the last rejected one, for the status page (issue 24). */
  private final ReloadStatus reloads = new ReloadStatus();
  /** The last publish of files ({@code --publish-dir}), for the status page. */
  private final PublishStatus publishes = new PublishStatus();
  /** This hub's streams share interned subscriptions and answers; other hubs' never do. */
  private final Sharing sharing = Sharing.interning();
  /** Who hears of stream events (the embedding API's callbacks); set before streams start. */
  private volatile StreamEvents events = StreamEvents.NONE;
  /** Who this server is, in every response (issue 21); null: not named. */
  private final ControlPlane controlPlane;

  /** A hub whose responses do not name their server (tests, benchmarks). */
  public DiscoveryHub() {
    this(null);
  }

  /**
   * A hub whose streams name this server in every response as {@code control_plane.identifier}
   * (issue 21), so that CSDS and client logs show which replica served a config; null or empty:
   * the field is left out. A per-hub constant: two servers in one JVM each send their own.
   */
  public DiscoveryHub(String controlPlaneId) {
    this.controlPlane = controlPlaneId == null || controlPlaneId.isEmpty() ? null
        : ControlPlane.newBuilder().setIdentifier(controlPlaneId).build();
    metrics.configStateBy(reloads::state);
  }

  /** What every response of this hub's streams carries as {@code control_plane}; null: none. */
  public ControlPlane controlPlane() {
    return controlPlane;
  }

  /** The xdstp authorities served (gRFC A47, {@code serve --authority}); empty: every one. */
  private volatile Set<String> authorities = Set.of();

  /**
   * Serves only the xdstp-named resources of these authorities from now on (issue 26, gRFC A47):
   * every config put in force is {@link ServedConfig#servingAuthorities} of them, so a request for
   * another authority's name is answered as does-not-exist. Empty: every authority in the config.
   * Set before the first config.
   */
  public void serveAuthorities(Set<String> authorities) {
    this.authorities = Set.copyOf(authorities);
  }

  /** See {@link #serveAuthorities}. */
  public Set<String> authorities() {
    return authorities;
  }

  /** This server's identifier (see {@link #DiscoveryHub(String)}); null when it has none. */
  public String controlPlaneId() {
    return controlPlane == null ? null : controlPlane.getIdentifier();
  }

  /** Streams opened from now on report their events to {@code events}. */
  public void events(StreamEvents events) {
    this.events = events == null ? StreamEvents.NONE : events;
  }

  StreamEvents events() {
    return events;
  }

  /** What the streams of this hub share (see {@link Sharing}). */
  public Sharing sharing() {
    return sharing;
  }

  public ServedConfig current() {
    return current.get().config();
  }

  /** The config in force with its generation. */
  Served served() {
    return current.get();
  }

  /** The last config load or reload and the last rejected one (see {@link ReloadStatus}). */
  public ReloadStatus reloads() {
    return reloads;
  }

  /**
   * A config was put in force ({@code changed} resources changed): counted in
   * {@code meridian_config_reloads_total{result="ok"}} and kept as the last reload.
   */
  public void reloaded(int changed) {
    reloaded(changed, List.of());
  }

  /** As {@link #reloaded(int)}; serve's checks found {@code warnings} in the config. */
  public void reloaded(int changed, List<String> warnings) {
    metrics.reload(true);
    reloads.served(changed, warnings);
  }

  /**
   * A config was rejected for {@code errors} and the last one stays in force: counted in
   * {@code meridian_config_reloads_total{result="failed"}} and kept as the last rejected reload.
   */
  public void reloadRejected(List<String> errors) {
    metrics.reload(false);
    reloads.rejected(errors);
  }

  /**
   * A config was held, since it would remove {@code removes}, and the last one stays in force:
   * counted in {@code meridian_config_reloads_total{result="held"}}, kept as the last held one.
   */
  public void reloadHeld(List<String> removes) {
    metrics.reloadHeld();
    reloads.held(removes);
  }

  /** After a failure or a hold, the config source holds what is served again. */
  public void reloadRecovered() {
    reloads.recovered();
  }

  /**
   * Whether a connected stream placed in {@code group} subscribes to {@code type} (by name or
   * wildcard): emptying that type there would cut it off.
   */
  public boolean subscribed(String group, ResourceType type) {
    return index.subscribed(group, type);
  }

  /** The last publish of files (see {@link PublishStatus}). */
  public PublishStatus publishes() {
    return publishes;
  }

  /**
   * The config was published to {@code dir}; {@code errors} says which files could not be
   * written (empty: every file is current). A failure is counted in
   * {@code meridian_publish_failures_total}.
   */
  public void published(String dir, List<String> errors) {
    if (!errors.isEmpty()) {
      metrics.publishFailed();
    }
    publishes.published(dir, errors);
  }

  public boolean isLoaded() {
    return loaded;
  }

  /** Serves {@code next} from now on; returns the number of changed resources across groups. */
  public synchronized int update(ServedConfig next) {
    next = next.servingAuthorities(authorities);
    Served before = current.get();
    ServedConfig previous = before.config();
    // Set before the index is read (dispatch): a stream that publishes a new interest after that
    // read then sees this config and catches up itself (StreamHandler).
    Served served = new Served(next, before.generation() + 1);
    current.set(served);
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
    // Groups redefined, or who may have which Secret (issue 20): any stream may be concerned.
    boolean groupsChanged = !previous.groups().stream().map(g -> g.name() + g.matcher())
        .toList().equals(next.groups().stream().map(g -> g.name() + g.matcher()).toList())
        || !previous.secretAccess().equals(next.secretAccess())
        || previous.placer() != next.placer();
    if (changes.isEmpty() && !groupsChanged) {
      return 0; // identical content: nothing is sent to anyone
    }
    // Groups redefined: any stream may have moved, and a stream that moves is re-evaluated whole.
    dispatch(served, changes, groupsChanged ? List.copyOf(streams) : index.concerned(changes));
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

  private void dispatch(Served served, Map<String, Map<ResourceType, Set<String>>> changes,
      List<Listener> all) {
    metrics.pushedTo(all.size());
    ServedConfig next = served.config();
    long gen = served.generation();
    Executor pool = fanOut;
    if (pool == null || all.size() < FAN_OUT_FROM) {
      for (Listener s : all) {
        s.onConfig(next, changes, gen);
      }
      return;
    }
    int ways = Math.min(fanOutWays, all.size());
    int per = (all.size() + ways - 1) / ways;
    CountDownLatch done = new CountDownLatch(ways);
    for (int w = 0; w < ways; w++) {
      List<Listener> chunk = all.subList(w * per, Math.min(all.size(), (w + 1) * per));
      try {
        pool.execute(() -> {
          try {
            chunk.forEach(s -> s.onConfigHere(next, changes, gen));
          } finally {
            done.countDown();
          }
        });
      } catch (RejectedExecutionException e) {
        chunk.forEach(s -> s.onConfig(next, changes, gen)); // shutting down: queue, as without fan-out
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
    ServedConfig config = current.get().config();
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

  /** Registers a listener that is handed every change (a REST poll, the file publisher). */
  void register(Listener stream) {
    index.addEverything(stream);
    streams.add(stream);
  }

  /**
   * Registers a stream that is handed only the changes its published interest concerns; nothing
   * until it publishes one ({@link #publish}).
   */
  void registerIndexed(Listener stream) {
    streams.add(stream);
  }

  /**
   * Publishes what concerns {@code stream} (from its serial executor); returns whether that
   * changed. After a change the caller must check {@link #served()} for a config it missed.
   */
  boolean publish(Listener stream, Interest interest) {
    return index.publish(stream, interest);
  }

  void unregister(Listener stream) {
    streams.remove(stream);
    index.remove(stream);
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
