package dev.meridian.internal.etcd;

import static dev.meridian.internal.etcd.EtcdClients.bytes;
import static dev.meridian.internal.etcd.EtcdClients.string;
import static dev.meridian.internal.etcd.EtcdClients.why;

import dev.meridian.internal.config.ConfigException;
import dev.meridian.internal.config.ConfigHeld;
import dev.meridian.internal.config.ConfigLoader;
import dev.meridian.internal.config.ConfigSource;
import dev.meridian.internal.config.StoreLayout;
import dev.meridian.internal.protocol.LogLine;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.common.exception.CompactedException;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import java.io.IOException;
import java.time.Clock;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Serves the config stored in etcd under a prefix (docs/etcd.md). A replica reads the prefix with
 * a linearizable read, then watches it from the next revision; every watch response (whole
 * transactions: etcd never splits a revision across responses) becomes one reload, so a
 * transaction reaches clients as one change. Only changed values are parsed again
 * ({@link ConfigLoader#loadStored}).
 *
 * <p>When etcd is unreachable the last config stays in force (the server keeps serving it) and
 * {@link #status} says so; jetcd resumes the watch from its revision when etcd returns, and a
 * watch whose revision was compacted meanwhile is replaced by a full reload. Either way the hub
 * diffs by content, so clients get only what changed.
 *
 * <p>All state is confined to one thread.
 */
public final class EtcdConfigSource implements ConfigSource {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger("dev.meridian.etcd.EtcdConfigSource");
  private static final long PROBE_MILLIS = 1000;
  private static final long MIN_BACKOFF_MILLIS = 200;
  private static final long MAX_BACKOFF_MILLIS = 5000;

  private final EtcdTarget target;
  private final StoreLayout layout;
  private final ConfigLoader loader;
  private final Clock clock;
  private final ScheduledExecutorService executor =
      dev.meridian.internal.config.CoreThreads.scheduler("meridian-etcd");
  private Client client;
  private Sink sink;

  // Confined to the executor's thread.
  private final Map<String, String> entries = new HashMap<>();
  /** What the sink last accepted. */
  private Map<String, String> applied;
  /** What it last refused or held: the same entries again are not handed on again. */
  private Map<String, String> refused;
  /** The store revision {@link #entries} reflect. */
  private long revision;
  private Watch.Watcher watcher;
  /** Bumped on every new watch: callbacks of an older one are ignored. */
  private long watchGeneration;
  private boolean reloadQueued;
  /** A recovery (watch again, or read again) waiting out its backoff, or null. */
  private java.util.concurrent.ScheduledFuture<?> scheduledRecovery;
  /** Whether the prefix has been read whole once: after that, a watch resumes from its revision. */
  private boolean read;
  private long backoffMillis = MIN_BACKOFF_MILLIS;
  private boolean connected;
  private String unreachable;
  private String invalid;
  private Instant since;

  /** The revision of the config in force. */
  private long servedRevision;

  private volatile Status status;

  public EtcdConfigSource(EtcdTarget target, ConfigLoader loader) {
    this(target, loader, Clock.systemUTC());
  }

  EtcdConfigSource(EtcdTarget target, ConfigLoader loader, Clock clock) {
    this.target = target;
    this.layout = target.layout();
    this.loader = loader;
    this.clock = clock;
    this.since = clock.instant();
    this.status = new Status(false, 0, false, "not connected yet", since);
  }

  @Override
  public String describe() {
    return target.url();
  }

  /** Builds the etcd client; fails only when the TLS files cannot be used. */
  public EtcdConfigSource connect() throws IOException {
    client = EtcdClients.connect(target);
    return this;
  }

  @Override
  public void start(Sink sink) {
    if (client == null) {
      throw new IllegalStateException("connect() first");
    }
    this.sink = sink;
    executor.execute(this::fullLoad);
    executor.scheduleWithFixedDelay(this::probe, PROBE_MILLIS, PROBE_MILLIS,
        TimeUnit.MILLISECONDS);
  }

  @Override
  public Status status() {
    return status;
  }

  @Override
  public long resourcesSerialized() {
    return loader.resourcesSerialized();
  }

  /** Reads the whole prefix (linearizable), serves it, and watches from the next revision. */
  private void fullLoad() {
    cancelRecovery();
    closeWatch();
    GetResponse r;
    try {
      r = client.getKVClient().get(bytes(layout.prefix()),
              GetOption.builder().isPrefix(true).build())
          .get(EtcdClients.REQUEST_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return;
    } catch (Exception e) {
      connection(false, "cannot read " + layout.prefix() + ": " + why(e));
      scheduleRecovery();
      return;
    }
    entries.clear();
    for (KeyValue kv : r.getKvs()) {
      entries.put(string(kv.getKey()), string(kv.getValue()));
    }
    revision = r.getHeader().getRevision();
    read = true;
    backoffMillis = MIN_BACKOFF_MILLIS;
    connection(true, null);
    LOG.info(LogLine.of("store_load").kv("store", target.url())
        .kv("keys", entries.size()).kv("revision", revision).toString());
    reload();
    watch(revision + 1);
  }

  /**
   * Back from an outage or a failed watch: watch again from the next revision, so that what
   * changed meanwhile arrives as events (a compacted revision makes it a full read).
   */
  private void recover() {
    cancelRecovery();
    if (!read) {
      fullLoad();
    } else if (watcher == null) {
      watch(revision + 1);
    }
  }

  private void watch(long fromRevision) {
    long generation = ++watchGeneration;
    // requireLeader: a member cut off from the quorum ends the watch instead of going quiet.
    watcher = client.getWatchClient().watch(bytes(layout.prefix()),
        WatchOption.builder().isPrefix(true).withRevision(fromRevision).withRequireLeader(true)
            .build(),
        Watch.listener(
            response -> run(() -> onEvents(generation, response)),
            error -> run(() -> onWatchError(generation, error))));
  }

  /** Runs on this source's thread; after {@link #close} there is nothing left to do. */
  private void run(Runnable task) {
    try {
      executor.execute(task);
    } catch (java.util.concurrent.RejectedExecutionException closed) {
      // closing
    }
  }

  private void onEvents(long generation, WatchResponse response) {
    if (generation != watchGeneration) {
      return;
    }
    for (WatchEvent e : response.getEvents()) {
      KeyValue kv = e.getKeyValue();
      String key = string(kv.getKey());
      if (e.getEventType() == WatchEvent.EventType.PUT) {
        entries.put(key, string(kv.getValue()));
      } else if (e.getEventType() == WatchEvent.EventType.DELETE) {
        entries.remove(key);
      }
      revision = Math.max(revision, kv.getModRevision());
    }
    if (!response.getEvents().isEmpty()) {
      connection(true, null);
      // Responses queued behind this one are applied before the reload runs: one reload for all.
      if (!reloadQueued) {
        reloadQueued = true;
        executor.execute(this::reload);
      }
    }
  }

  private void onWatchError(long generation, Throwable error) {
    if (generation != watchGeneration) {
      return;
    }
    // Our watcher, closed here: jetcd would otherwise resume it on its own as well.
    closeWatch();
    if (error instanceof CompactedException || why(error).contains("compacted")) {
      // The revisions after ours are gone: read the whole prefix again; the hub sends what changed.
      LOG.warn(LogLine.of("store_watch_compacted")
          .kv("store", target.url()).kv("revision", revision).kv("action", "full reload")
          .toString());
      fullLoad();
      return;
    }
    connection(false, "watch failed: " + why(error));
    scheduleRecovery();
  }

  private void reload() {
    reloadQueued = false;
    if (applied == null && entries.isEmpty()) {
      // A first config of nothing would tell every client that all its resources are gone.
      invalid = "nothing is stored under " + layout.prefix() + " yet (meridian apply writes it)";
      publishStatus(false);
      return;
    }
    if (entries.equals(applied)) {
      // A full read after an outage that found nothing new, or back to the config in force
      // after a refused one: nothing to hand on, but a failure shown is over.
      servedRevision = revision;
      boolean wasRefused = invalid != null;
      invalid = null;
      refused = null;
      publishStatus(true);
      if (wasRefused) {
        sink.recovered(revision);
      }
      return;
    }
    if (entries.equals(refused)) {
      return; // refused already, and said so: the same again is not news
    }
    try {
      ConfigLoader.Loaded loaded = loader.loadStored(layout, entries);
      sink.apply(loaded, revision);
      applied = new HashMap<>(entries);
      refused = null;
      invalid = null;
      servedRevision = revision;
      publishStatus(true);
    } catch (ConfigHeld e) {
      refused = new HashMap<>(entries);
      invalid = "the config at revision " + revision + " is held: it would empty what is served ("
          + String.join("; ", e.found().all()) + "); serving the last good one (serve "
          + "--allow-emptying applies such a config)";
      publishStatus(status.loaded());
      sink.failed(e);
    } catch (ConfigException e) {
      refused = new HashMap<>(entries);
      invalid = "the config at revision " + revision + " is invalid (serving the last good one): "
          + e.getMessage();
      publishStatus(status.loaded());
      sink.failed(e);
    } catch (RuntimeException e) {
      // A sink that fails otherwise (a publish dir that cannot be written): the same as invalid,
      // and the watch goes on.
      invalid = "the config at revision " + revision + " could not be served: " + e;
      publishStatus(status.loaded());
      sink.failed(new ConfigException(invalid));
    }
  }

  /** Whether etcd answers: a cheap serializable read every second, off this thread. */
  private void probe() {
    // Linearizable: a member cut off from the quorum does not count as reachable.
    client.getKVClient().get(bytes(layout.secretAccessKey()),
            GetOption.builder().withCountOnly(true).build())
        .orTimeout(2 * PROBE_MILLIS, TimeUnit.MILLISECONDS)
        .whenComplete((r, e) -> {
          try {
            executor.execute(() -> {
              if (e == null) {
                connection(true, null);
                if (watcher == null) {
                  recover(); // etcd is back: no need to wait out the backoff
                }
              } else {
                connection(false, "etcd does not answer: " + why(e));
              }
            });
          } catch (java.util.concurrent.RejectedExecutionException closed) {
            // closing
          }
        });
  }

  private void scheduleRecovery() {
    if (scheduledRecovery != null) {
      return;
    }
    scheduledRecovery = executor.schedule(this::recover, backoffMillis, TimeUnit.MILLISECONDS);
    backoffMillis = Math.min(MAX_BACKOFF_MILLIS, backoffMillis * 2);
  }

  private void cancelRecovery() {
    if (scheduledRecovery != null) {
      scheduledRecovery.cancel(false);
      scheduledRecovery = null;
    }
  }

  private void connection(boolean up, String why) {
    if (up != connected) {
      connected = up;
      since = clock.instant();
      LOG.atLevel(up ? org.slf4j.event.Level.INFO : org.slf4j.event.Level.WARN).log(
          LogLine.of(up ? "store_connected" : "store_unreachable").kv("store", target.url())
              .kv("revision", revision).kv("error", why).toString());
    }
    unreachable = up ? null : why;
    publishStatus(status.loaded());
  }

  private void publishStatus(boolean loaded) {
    String detail = unreachable != null ? unreachable : invalid;
    status = new Status(connected, servedRevision, loaded, detail, since);
  }

  private void closeWatch() {
    watchGeneration++;
    if (watcher != null) {
      watcher.close();
      watcher = null;
    }
  }

  @Override
  public void close() {
    executor.shutdownNow();
    try {
      executor.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (watcher != null) {
      watcher.close();
    }
    if (client != null) {
      client.close();
    }
  }
}
