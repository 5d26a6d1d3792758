package dev.meridian.server;

import dev.meridian.config.ConfigException;
import dev.meridian.config.ConfigLoader;
import dev.meridian.config.ConfigWatcher;
import dev.meridian.config.ReferenceCheck;
import java.util.List;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Clock;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.time.Duration;
import dev.meridian.protocol.HeartbeatPolicy;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The standalone server: config from files (watched and hot-reloaded), the xDS gRPC port and the
 * HTTP port. {@link #start} fails with {@link ConfigException} if the first load fails.
 */
public final class MeridianServer implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger("dev.meridian.server");

  /**
   * Options of {@code meridian serve}. Port 0 picks an ephemeral port.
   *
   * @param heartbeatInterval how often TTL resources are heartbeated; null: a third of the TTL
   * @param referenceCheck what to do with dangling references on load (see {@link ReferenceCheck})
   */
  public record Options(Path config, String bind, int xdsPort, int httpPort, long pollMillis,
      Duration heartbeatInterval, ReferenceCheck referenceCheck, Duration restMaxWait,
      Path publishDir, FilePublisher.Format publishFormat) {
    public Options {
      if (pollMillis <= 0) {
        pollMillis = 1000;
      }
      if (referenceCheck == null) {
        referenceCheck = ReferenceCheck.WARN;
      }
      if (restMaxWait == null) {
        restMaxWait = Duration.ofSeconds(60);
      }
      if (publishFormat == null) {
        publishFormat = FilePublisher.Format.YAML;
      }
    }

    public Options(Path config, String bind, int xdsPort, int httpPort, long pollMillis) {
      this(config, bind, xdsPort, httpPort, pollMillis, null, ReferenceCheck.WARN, null, null, null);
    }

    public Options(Path config, String bind, int xdsPort, int httpPort, long pollMillis,
        Duration heartbeatInterval, ReferenceCheck referenceCheck) {
      this(config, bind, xdsPort, httpPort, pollMillis, heartbeatInterval, referenceCheck, null,
          null, null);
    }

    HeartbeatPolicy heartbeats() {
      return heartbeatInterval == null ? HeartbeatPolicy.DEFAULT
          : HeartbeatPolicy.fixed(heartbeatInterval);
    }
  }

  private final Options options;
  private final DiscoveryHub hub = new DiscoveryHub();
  private final ExecutorService streamPool;
  private static final long TICK_MILLIS = 250;
  private final ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "meridian-ticker");
    t.setDaemon(true);
    return t;
  });
  private ConfigWatcher watcher;
  private Server grpc;
  private AdminHttpServer http;
  private volatile boolean serving;

  public MeridianServer(Options options) {
    this.options = options;
    int threads = Math.max(2, Runtime.getRuntime().availableProcessors());
    this.streamPool = Executors.newFixedThreadPool(threads, r -> {
      Thread t = new Thread(r, "meridian-stream");
      t.setDaemon(true);
      return t;
    });
  }

  public MeridianServer start() throws ConfigException, IOException {
    watcher = new ConfigWatcher(options.config(), new ConfigLoader(), loaded -> {
      if (!referencesOk(loaded)) {
        LOG.log(System.Logger.Level.ERROR,
            "config rejected (--reference-check reject), still serving the last good config");
        return;
      }
      int changed = hub.update(loaded.config());
      LOG.log(System.Logger.Level.INFO,
          "config reloaded: {0} resources in {1} group(s) from {2} file(s); {3} changed",
          loaded.resources(), loaded.groups() + 1, loaded.files().size(), changed);
    }, error -> LOG.log(System.Logger.Level.ERROR,
        "config rejected, still serving the last good config: {0}", error.getMessage()),
        options.pollMillis());
    ConfigLoader.Loaded first;
    try {
      first = watcher.start();
    } catch (ConfigException e) {
      watcher.close();
      throw e;
    }
    if (!referencesOk(first)) {
      watcher.close();
      throw new ConfigException(ReferenceCheck.problems(first.config()));
    }
    if (options.publishDir() != null) {
      FilePublisher publisher = new FilePublisher(options.publishDir(), options.publishFormat());
      hub.register(publisher.listener());
      publisher.publish(first.config());
    }
    hub.update(first.config());
    LOG.log(System.Logger.Level.INFO, "config loaded: {0} resources in {1} group(s) from {2}",
        first.resources(), first.groups() + 1, options.config());
    NettyServerBuilder b = NettyServerBuilder
        .forAddress(new InetSocketAddress(options.bind(), options.xdsPort()))
        .permitKeepAliveTime(10, TimeUnit.SECONDS)
        .permitKeepAliveWithoutCalls(true)
        .maxInboundMessageSize(64 * 1024 * 1024);
    for (ServerServiceDefinition d : XdsServices.all(hub, Clock.systemUTC(), streamPool,
        options.heartbeats())) {
      b.addService(d);
    }
    try {
      grpc = b.build().start();
      http = new AdminHttpServer(new InetSocketAddress(options.bind(), options.httpPort()),
          () -> serving && hub.isLoaded());
      http.handle(RestDiscovery.PREFIX, new RestDiscovery(hub, Clock.systemUTC(),
          options.heartbeats(), streamPool, ticker, options.restMaxWait()));
    } catch (IOException e) {
      close();
      throw e;
    }
    serving = true;
    // Heartbeat cadence: well within the shortest interval a TTL can ask for (at most 1 s).
    ticker.scheduleAtFixedRate(hub::tick, TICK_MILLIS, TICK_MILLIS, TimeUnit.MILLISECONDS);
    return this;
  }

  /** Runs the consistency check; false only if it must reject the config. */
  private boolean referencesOk(ConfigLoader.Loaded loaded) {
    if (options.referenceCheck() == ReferenceCheck.OFF) {
      return true;
    }
    List<String> problems = ReferenceCheck.problems(loaded.config());
    for (String p : problems) {
      LOG.log(System.Logger.Level.WARNING, "dangling reference: {0}", p);
    }
    return problems.isEmpty() || options.referenceCheck() != ReferenceCheck.REJECT;
  }

  public int xdsPort() {
    return ((InetSocketAddress) grpc.getListenSockets().get(0)).getPort();
  }

  public int httpPort() {
    return http.port();
  }

  public DiscoveryHub hub() {
    return hub;
  }

  public void awaitTermination() throws InterruptedException {
    grpc.awaitTermination();
  }

  @Override
  public void close() {
    serving = false;
    ticker.shutdownNow();
    if (watcher != null) {
      watcher.close();
    }
    if (http != null) {
      http.close();
    }
    if (grpc != null) {
      grpc.shutdown();
      try {
        if (!grpc.awaitTermination(5, TimeUnit.SECONDS)) {
          grpc.shutdownNow();
        }
      } catch (InterruptedException e) {
        grpc.shutdownNow();
        Thread.currentThread().interrupt();
      }
    }
    streamPool.shutdownNow();
  }
}
