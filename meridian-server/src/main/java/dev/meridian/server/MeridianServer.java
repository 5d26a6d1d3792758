package dev.meridian.server;

import dev.meridian.config.ConfigException;
import dev.meridian.config.ConfigLoader;
import dev.meridian.config.ConfigWatcher;
import dev.meridian.config.GrpcProfile;
import dev.meridian.protocol.ServedConfig;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Clock;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The standalone server: config from files (watched and hot-reloaded), the xDS gRPC port and the
 * HTTP port. {@link #start} fails with {@link ConfigException} if the first load fails.
 */
public final class MeridianServer implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger("dev.meridian.server");

  /** Options of {@code meridian serve}. Port 0 picks an ephemeral port. */
  public record Options(Path config, String bind, int xdsPort, int httpPort, long pollMillis) {
    public Options {
      if (pollMillis <= 0) {
        pollMillis = 1000;
      }
    }
  }

  private final Options options;
  private final DiscoveryHub hub = new DiscoveryHub();
  private final ExecutorService streamPool;
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
      int changed = hub.update(loaded.config());
      warnGrpcProfile(loaded.config());
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
    hub.update(first.config());
    warnGrpcProfile(first.config());
    LOG.log(System.Logger.Level.INFO, "config loaded: {0} resources in {1} group(s) from {2}",
        first.resources(), first.groups() + 1, options.config());
    NettyServerBuilder b = NettyServerBuilder
        .forAddress(new InetSocketAddress(options.bind(), options.xdsPort()))
        .permitKeepAliveTime(10, TimeUnit.SECONDS)
        .permitKeepAliveWithoutCalls(true)
        .maxInboundMessageSize(64 * 1024 * 1024);
    for (ServerServiceDefinition d : XdsServices.all(hub, Clock.systemUTC(), streamPool)) {
      b.addService(d);
    }
    try {
      grpc = b.build().start();
      http = new AdminHttpServer(new InetSocketAddress(options.bind(), options.httpPort()),
          () -> serving && hub.isLoaded());
    } catch (IOException e) {
      close();
      throw e;
    }
    serving = true;
    return this;
  }

  /**
   * Issue 5: a config meant for proxyless gRPC (it has API listeners) is checked with the grpc
   * profile of {@code meridian validate}; what grpc-java would NACK or ignore is logged, not refused.
   */
  private static void warnGrpcProfile(ServedConfig config) {
    if (GrpcProfile.servesGrpcClients(config)) {
      for (GrpcProfile.Finding f : GrpcProfile.check(config)) {
        LOG.log(System.Logger.Level.WARNING, "grpc profile: {0}", f);
      }
    }
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
    if (watcher != null) {
      watcher.close();
    }
    if (http != null) {
      http.close();
    }
    if (grpc != null) {
      // xDS streams never end by themselves, so a graceful shutdown() could only wait out its
      // timeout (5 s per restart with any client connected). Cancel them now: clients reconnect
      // to the next server with the versions they hold (issue 5, restart scenario).
      grpc.shutdownNow();
      try {
        grpc.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        grpc.shutdownNow();
        Thread.currentThread().interrupt();
      }
    }
    streamPool.shutdownNow();
  }
}
