package dev.meridian.internal.server;

import com.sun.net.httpserver.HttpHandler;
import dev.meridian.internal.config.CoreThreads;
import dev.meridian.internal.protocol.HeartbeatPolicy;
import dev.meridian.internal.protocol.LogLine;
import io.envoyproxy.envoy.service.status.v3.ClientStatusRequest;
import io.envoyproxy.envoy.service.status.v3.ClientStatusResponse;
import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.IoHandlerFactory;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.ServerChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollIoHandler;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.nio.NioIoHandler;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import io.grpc.protobuf.services.HealthStatusManager;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The engine behind the embedding API ({@code dev.meridian.server.Meridian}): a hub, its stream
 * pool and heartbeat ticker, the xDS services for any gRPC server, and optionally a gRPC server
 * and an admin HTTP server of its own. Config reaches the hub from code ({@link DiscoveryHub#update}),
 * through the same diff and fan-out as a file reload.
 */
public final class EmbeddedServer implements AutoCloseable {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger("dev.meridian.server");
  private static final long TICK_MILLIS = 250;
  private static final long TLS_RELOAD_MILLIS = 1000;

  /**
   * {@code permitKeepAliveTime} to {@code shutdownTimeout}: the transport and shutdown settings of
   * the server {@link #start} opens.
   *
   * @param controlPlaneId what every response names as {@code control_plane.identifier}
   * @param heartbeatInterval null: a third of each TTL
   * @param plaintextSecrets whether streams without a verified client certificate get Secrets
   * @param bounds what one client may take (issue 25); null: {@link Bounds#DEFAULT}
   * @param authorities the xdstp authorities served (issue 26, gRFC A47); empty or null: every
   *     authority in the config
   */
  public record Settings(String controlPlaneId, Duration heartbeatInterval,
      boolean plaintextSecrets, Duration permitKeepAliveTime, Duration keepAliveTime,
      Duration keepAliveTimeout, Duration maxConnectionAge, Duration maxConnectionAgeGrace,
      Duration shutdownTimeout, Bounds bounds, java.util.Set<String> authorities,
      java.util.List<String> adminAllowedHosts) {
    public Settings {
      if (bounds == null) {
        bounds = Bounds.DEFAULT;
      }
      authorities = authorities == null ? java.util.Set.of() : java.util.Set.copyOf(authorities);
      adminAllowedHosts = adminAllowedHosts == null ? java.util.List.of()
          : adminAllowedHosts.stream().map(AdminAccess::checkAllowedHost).distinct().toList();
    }
  }

  /** TLS files of the server {@link #start} opens; {@code clientCa} null: no client certificates. */
  public record TlsFiles(Path cert, Path key, Path clientCa) {}

  private final Settings settings;
  private final DiscoveryHub hub;
  private final ExecutorService streamPool;
  private final ScheduledExecutorService ticker;
  /** CSDS over this hub: the service (on any server) and {@link #clientStatus} share it. */
  private final CsdsService csds;
  private final HealthStatusManager health = new HealthStatusManager();
  /** {@code --max-request-memory}: requests held at once, gRPC and REST-JSON together. */
  private final RequestMemory requestMemory;
  /** {@code --max-streams}, across every server the xDS services are added to. */
  private final StreamCap streamCap;
  /** Each call's peer and identity; one for every service, so its refusal log is rate-limited once. */
  private final PeerAddress peers = new PeerAddress(Clock.systemUTC());
  /** {@code --max-streams-per-peer}, likewise. */
  private final PeerStreamQuota peerStreams;
  private final AtomicBoolean closing = new AtomicBoolean();
  private final AtomicBoolean healthStopped = new AtomicBoolean();
  private final List<AutoCloseable> owned = new ArrayList<>();
  private Server grpc;
  /** The connections of the server {@link #start} opened, and their event loops. */
  private ConnectionGate connections;
  private PartialMessages partialMessages;
  /** Held so that its filter on grpc-java's logger stays while the server runs. */
  private ClientResets clientResets;
  private EventLoopGroup boss;
  private EventLoopGroup workers;
  private AdminHttpServer admin;

  public EmbeddedServer(Settings settings) {
    this.settings = settings;
    this.hub = new DiscoveryHub(settings.controlPlaneId());
    hub.serveAuthorities(settings.authorities());
    this.streamCap = new StreamCap(settings.bounds().maxStreams(), hub.metrics());
    this.requestMemory = new RequestMemory(settings.bounds().requestMemoryLimit());
    this.peerStreams = new PeerStreamQuota(settings.bounds().streamsPerPeerLimit(),
        hub.metrics());
    int threads = Math.max(2, Runtime.getRuntime().availableProcessors());
    // An Error in any of Meridian's threads ends the process (see CoreThreads).
    this.streamPool = CoreThreads.pool("meridian-stream", threads);
    hub.fanOutOn(streamPool, threads);
    this.csds = new CsdsService(hub, streamPool);
    this.ticker = CoreThreads.scheduler("meridian-ticker");
    ticker.scheduleAtFixedRate(hub::tick, TICK_MILLIS, TICK_MILLIS, TimeUnit.MILLISECONDS);
    health.setStatus(HealthStatusManager.SERVICE_NAME_ALL_SERVICES, ServingStatus.NOT_SERVING);
  }

  public DiscoveryHub hub() {
    return hub;
  }

  /** What one client may take. */
  Bounds bounds() {
    return settings.bounds();
  }

  /** The requests the server holds at once (REST-JSON polls count too). */
  RequestMemory requestMemory() {
    return requestMemory;
  }

  /** The streams' pool (REST-JSON polls run on it too). */
  ExecutorService streamPool() {
    return streamPool;
  }

  /** The heartbeat ticker (REST-JSON poll deadlines run on it too). */
  ScheduledExecutorService ticker() {
    return ticker;
  }

  /** Returns once the server {@link #start} opened has terminated. */
  void awaitTermination() throws InterruptedException {
    Server s;
    synchronized (this) {
      s = grpc;
    }
    if (s != null) {
      s.awaitTermination();
    }
  }

  /**
   * Where {@code meridian_resources_serialized_total} comes from: the count of resources the
   * embedding's publisher built (each serialized once).
   */
  public void resourcesSerializedBy(java.util.function.LongSupplier counter) {
    hub.metrics().resourcesSerializedBy(counter);
  }

  private HeartbeatPolicy heartbeats() {
    return settings.heartbeatInterval() == null ? HeartbeatPolicy.DEFAULT
        : HeartbeatPolicy.fixed(settings.heartbeatInterval());
  }

  /**
   * Every xDS discovery service, each call seen with its peer and verified identity and refused
   * UNAVAILABLE until the first config is published (an empty config would tell clients every
   * resource is gone), RESOURCE_EXHAUSTED beyond the maximum of streams, and closed
   * RESOURCE_EXHAUSTED beyond its request rate.
   */
  public List<ServerServiceDefinition> xdsServices() {
    List<ServerServiceDefinition> defs = new ArrayList<>();
    for (ServerServiceDefinition d : XdsServices.all(hub, Clock.systemUTC(), streamPool,
        heartbeats(), settings.plaintextSecrets(), settings.bounds().maxRequestRate(),
        settings.bounds().maxResourceNames(), requestMemory)) {
      // The last interceptor runs first: a call over a cap costs nothing further.
      defs.add(ServerInterceptors.intercept(d, new NotLoadedYet(hub), peers,
          peerStreams, streamCap));
    }
    return defs;
  }

  /** CSDS over the hub's streams; it shows every client's config, so the application guards it. */
  public ServerServiceDefinition csdsService() {
    return ServerInterceptors.intercept(csds, peers);
  }

  /** The standard gRPC health service: SERVING while {@link #isReady}. */
  public BindableService healthService() {
    return health.getHealthService();
  }

  /** The config went in force: the health service follows readiness. */
  public void updateHealth() {
    updateHealth(isReady());
  }

  /** Sets the health service's status; after a close began it stays NOT_SERVING. */
  synchronized void updateHealth(boolean ready) {
    if (!closing.get()) {
      health.setStatus(HealthStatusManager.SERVICE_NAME_ALL_SERVICES,
          ready ? ServingStatus.SERVING : ServingStatus.NOT_SERVING);
    }
  }

  /** Ready: a config was published and no close began. */
  public boolean isReady() {
    return hub.isLoaded() && !closing.get();
  }

  /**
   * Opens a gRPC server of its own with every xDS service, CSDS (refused to all under mTLS unless
   * {@code csdsIdentity} matches) and health; returns the bound port.
   */
  public synchronized int start(InetSocketAddress address, TlsFiles tlsFiles, String csdsIdentity)
      throws IOException {
    ServerTls tls = null;
    if (tlsFiles != null) {
      try {
        tls = loadTls(tlsFiles);
      } catch (ServerTls.InvalidTlsFiles e) {
        throw new IOException("TLS files cannot serve: " + String.join("; ", e.problems));
      }
    }
    return start(address, tls, csdsIdentity);
  }

  /**
   * Loads TLS files and re-reads them when they change (rotation without a restart: new
   * handshakes use the new files, connections continue).
   */
  ServerTls loadTls(TlsFiles files) throws ServerTls.InvalidTlsFiles {
    ServerTls tls = ServerTls.load(new ServerTls.Files(files.cert(), files.key(),
        files.clientCa()), Clock.systemUTC(), hub.metrics()::tlsReload);
    ticker.scheduleWithFixedDelay(tls::reloadIfChanged, TLS_RELOAD_MILLIS, TLS_RELOAD_MILLIS,
        TimeUnit.MILLISECONDS);
    return tls;
  }

  /** As {@link #start(InetSocketAddress, TlsFiles, String)} with TLS already loaded (or null). */
  synchronized int start(InetSocketAddress address, ServerTls tls, String csdsIdentity)
      throws IOException {
    if (grpc != null) {
      throw new IllegalStateException("already serving on port " + port());
    }
    if (closing.get()) {
      throw new IOException("closed while starting");
    }
    Bounds bounds = settings.bounds();
    connections = new ConnectionGate(bounds.connectionLimit(), bounds.connectionsPerPeerLimit(),
        tls != null && tls.requiresClientCertificates(), hub.metrics());
    clientResets = new ClientResets();
    partialMessages = new PartialMessages(bounds.partialBytesLimit(),
        bounds.partialBytesPerConnectionLimit(), bounds.messageReceiveTimeout(),
        Clock.systemUTC(), hub.metrics());
    long sweepMillis = Math.max(10, Math.min(TICK_MILLIS,
        bounds.messageReceiveTimeout().toMillis() / 4));
    ticker.scheduleAtFixedRate(partialMessages::expire, sweepMillis, sweepMillis,
        TimeUnit.MILLISECONDS);
    // Event loops and a server channel of our own: the gate must see each connection as it is
    // accepted, before any handshake, which grpc-java's default channel offers no hook for.
    boolean epoll = Epoll.isAvailable();
    IoHandlerFactory io = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
    boss = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("meridian-xds-accept",
        true), io);
    workers = new MultiThreadIoEventLoopGroup(0, new DefaultThreadFactory("meridian-xds", true),
        io);
    ConnectionGate gate = connections;
    NettyServerBuilder b = (tls == null ? NettyServerBuilder.forAddress(address)
        : NettyServerBuilder.forAddress(address, tls.grpcCredentials()))
        .bossEventLoopGroup(boss)
        .workerEventLoopGroup(workers)
        .channelFactory(() -> {
          ServerChannel ch = epoll ? new EpollServerSocketChannel() : new NioServerSocketChannel();
          ch.pipeline().addLast(gate.acceptHandler());
          return ch;
        })
        .addTransportFilter(gate.transportFilter())
        // TLS handshake, HTTP/2 preface and SETTINGS: grpc-java's 120 s default let idle
        // plaintext sockets pile up
        .handshakeTimeout(bounds.handshakeTimeout().toNanos(), TimeUnit.NANOSECONDS)
        .addStreamTracerFactory(partialMessages)
        .permitKeepAliveTime(settings.permitKeepAliveTime().toNanos(), TimeUnit.NANOSECONDS)
        .permitKeepAliveWithoutCalls(true)
        .keepAliveTime(settings.keepAliveTime().toNanos(), TimeUnit.NANOSECONDS)
        .keepAliveTimeout(settings.keepAliveTimeout().toNanos(), TimeUnit.NANOSECONDS)
        .maxInboundMessageSize(settings.bounds().maxRequestBytes())
        .maxConcurrentCallsPerConnection(settings.bounds().maxStreamsPerConnection())
        // rapid reset (CVE-2023-44487): a connection resetting streams this fast gets a GOAWAY
        .maxRstFramesPerWindow(settings.bounds().maxStreamResets(), Bounds.RESET_WINDOW_SECONDS)
        .directExecutor(); // handlers only hand work to each stream's serial executor
    if (settings.maxConnectionAge() != null) {
      b.maxConnectionAge(settings.maxConnectionAge().toNanos(), TimeUnit.NANOSECONDS)
          .maxConnectionAgeGrace(settings.maxConnectionAgeGrace().toNanos(), TimeUnit.NANOSECONDS);
    }
    xdsServices().forEach(b::addService);
    b.addService(healthService());
    b.addService(tls != null && tls.requiresClientCertificates()
        ? ServerInterceptors.intercept(csds, new CsdsAccess(csdsIdentity), peers)
        : ServerInterceptors.intercept(csds, peers));
    try {
      grpc = b.build().start();
    } catch (IOException | RuntimeException e) {
      grpc = null;
      shutDownEventLoops();
      throw e;
    }
    updateHealth();
    return port();
  }

  private void shutDownEventLoops() {
    if (boss != null) {
      boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
      workers.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
  }

  /** xDS connections open on the server {@link #start} opened (0 before it). */
  synchronized int connectionsOpen() {
    return connections == null ? 0 : connections.open();
  }

  /** Bytes of request messages received in part on the server {@link #start} opened. */
  synchronized long partialMessageBytes() {
    return partialMessages == null ? 0 : partialMessages.held();
  }

  /** The streams {@code peer} holds ("address 127.0.0.2", "identity spiffe://..."). */
  int streamsOfPeer(String peer) {
    return peerStreams.held(peer);
  }

  /** The port of the server {@link #start} opened, or -1. */
  public synchronized int port() {
    return grpc == null ? -1 : ((InetSocketAddress) grpc.getListenSockets().get(0)).getPort();
  }

  /** Opens the admin HTTP endpoints on a port of their own; returns the bound address. */
  public synchronized InetSocketAddress startAdmin(InetSocketAddress address) throws IOException {
    if (admin != null) {
      throw new IllegalStateException("admin HTTP already started on " + admin.address());
    }
    admin = new AdminHttpServer(address, () -> !closing.get(), this::isReady, hub, null, null,
        settings.bounds(), settings.adminAllowedHosts());
    return admin.address();
  }

  /** The admin endpoints as one handler, to mount in the application's own JDK HTTP server. */
  public HttpHandler adminHandler() {
    return AdminHttpServer.mounted(
        AdminHttpServer.routes(() -> !closing.get(), this::isReady, hub, null));
  }

  /** What {@code /clients} shows. */
  public String clientsJson() throws Exception {
    return AdminHttpServer.clientsJson(hub, null);
  }

  /** What {@code /config_dump} shows (Secrets redacted). */
  public String configDumpJson() {
    return AdminHttpServer.configDumpJson(hub);
  }

  /** What {@code /metrics} shows (Prometheus text format). */
  public String metricsText() {
    return hub.metrics().render();
  }

  /**
   * Registers the {@code meridian_*} metrics into the application's {@code registry} as well,
   * until this server closes.
   *
   * @throws IllegalArgumentException when one of the names is already registered there
   */
  public void metricsInto(io.prometheus.metrics.model.registry.PrometheusRegistry registry) {
    hub.metrics().registerInto(registry);
    own(() -> hub.metrics().unregisterFrom(registry));
  }

  /** What CSDS answers to {@code request}. */
  public ClientStatusResponse clientStatus(ClientStatusRequest request) throws Exception {
    return csds.answer(request)
        .get(StreamRegistry.STATUS_TIMEOUT.toMillis() + 1000, TimeUnit.MILLISECONDS);
  }

  private void awaitStreamsEnded() {
    long deadline = System.nanoTime() + settings.shutdownTimeout().toNanos();
    while (hub.registry().size() > 0 && System.nanoTime() < deadline) {
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /** The health service says NOT_SERVING from now on (a shutdown began). Idempotent. */
  void stopServingHealth() {
    // grpc-java logs a warning with a stack trace on a second enterTerminalState
    if (healthStopped.compareAndSet(false, true)) {
      health.enterTerminalState();
    }
  }

  /** Closes {@code c} with this server. */
  public synchronized void own(AutoCloseable c) {
    owned.add(c);
  }

  /**
   * Ends every stream (each hands the transport what it has queued, then ends UNAVAILABLE so that
   * clients reconnect elsewhere), stops what this server opened, its threads. Idempotent.
   */
  @Override
  public void close() {
    close(true);
  }

  /**
   * Closes a server whose start failed before it served: as {@link #close}, without the
   * {@code shutdown} line, which would read as the end of a server that ran.
   */
  void abandon() {
    close(false);
  }

  private void close(boolean logged) {
    if (!closing.compareAndSet(false, true)) {
      return;
    }
    stopServingHealth(); // NOT_SERVING from the first instant of a shutdown
    ticker.shutdownNow();
    long started = System.nanoTime();
    int streams = hub.registry().size();
    boolean forced = false;
    if (grpc != null) {
      grpc.shutdown();
    }
    for (ConnectedStream s : hub.registry().streams()) {
      s.drain();
    }
    if (grpc == null) {
      awaitStreamsEnded(); // streams on the application's server: theirs to end, ours to drain
    } else {
      try {
        if (!grpc.awaitTermination(settings.shutdownTimeout().toNanos(), TimeUnit.NANOSECONDS)) {
          forced = true;
          grpc.shutdownNow();
          grpc.awaitTermination(1, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        forced = true;
        grpc.shutdownNow();
        Thread.currentThread().interrupt();
      }
    }
    shutDownEventLoops();
    if (admin != null) {
      admin.close();
    }
    synchronized (this) {
      for (AutoCloseable c : owned) {
        try {
          c.close();
        } catch (Exception e) {
          // closing: nothing left to tell
        }
      }
    }
    streamPool.shutdownNow();
    if (!logged) {
      return;
    }
    LOG.info(LogLine.of("shutdown").kv("streams", streams)
        .kv("forced", forced)
        .kv("duration_ms", (System.nanoTime() - started) / 1_000_000).toString());
  }
}
