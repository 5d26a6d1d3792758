package dev.meridian.internal.server;

import dev.meridian.internal.config.ConfigException;
import dev.meridian.internal.config.ConfigLoader;
import dev.meridian.internal.config.ConfigSource;
import dev.meridian.internal.config.ConfigWatcher;
import dev.meridian.internal.config.ConfigChecks;
import dev.meridian.internal.config.ConfigDirectory;
import dev.meridian.internal.config.ConfigHeld;
import dev.meridian.internal.config.Emptying;
import dev.meridian.internal.protocol.LogLine;
import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.internal.config.ReferenceCheck;
import dev.meridian.internal.config.RuleCheck;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import dev.meridian.internal.protocol.HeartbeatPolicy;

/**
 * The standalone server: config from files (watched and hot-reloaded), the xDS gRPC port and the
 * HTTP port. {@link #start} fails with {@link ConfigException} if the first load fails.
 */
public final class MeridianServer implements AutoCloseable {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger("dev.meridian.server");

  /**
   * Options of {@code meridian serve}. Port 0 picks an ephemeral port. Null means the default.
   *
   * @param bind the xDS (gRPC) listen address
   * @param adminBind the HTTP (admin) listen address; loopback unless configured otherwise, since
   *     {@code /config_dump} shows every served resource
   * @param maxConnectionAge null: connections live forever; else GOAWAY after this age (plus up to
   *     10% jitter, grpc-java's) so that clients rebalance across replicas
   * @param maxConnectionAgeGrace how long streams may continue after that GOAWAY before the
   *     connection is closed; xDS streams never end on their own, so this bounds them
   * @param permitKeepAliveTime the most frequent client keepalive ping accepted (grpc-java clients
   *     ping at most every 10s, Envoy as often as its {@code connection_keepalive} says)
   * @param keepAliveTime how often the server pings an idle connection to detect dead clients
   * @param shutdownTimeout how long a graceful shutdown waits for streams to end before forcing
   * @param heartbeatInterval how often TTL resources are heartbeated; null: a third of the TTL
   * @param referenceCheck what to do with dangling references on load (see {@link ReferenceCheck})
   * @param restMaxWait the cap on a REST-JSON poll's {@code Prefer: wait}
   * @param publishDir null, or where to publish DiscoveryResponse files for path config sources
   * @param controlPlaneId what every response names as {@code control_plane.identifier} (issue
   *     21); null: {@link MeridianServer#defaultControlPlaneId()}, {@code meridian@<host name>}
   * @param bounds what one client may take (issue 25); null: {@link Bounds#DEFAULT}
   * @param authorities the xdstp authorities served (issue 26, {@code --authority}); null or
   *     empty: every authority in the config
   * @param adminAllowedHosts host names and addresses the admin port answers to besides loopback
   *     and its own address ({@code --admin-allowed-hosts}); null: none
   * @param publishSecrets whether published files include each group's Secrets (private keys);
   *     false: they are served over xDS only
   * @param ruleCheck whether every loaded resource is checked against Envoy's rules
   *     ({@code --validation}); null: {@link RuleCheck#ENVOY}
   * @param allowEmptying whether a reload that would empty what is served is applied ({@code
   *     --allow-emptying}); false: it is held and the last good config stays
   */
  public record Options(Path config,
      String bind,
      int xdsPort,
      int httpPort,
      long pollMillis,
      String adminBind,
      Duration maxConnectionAge,
      Duration maxConnectionAgeGrace,
      Duration permitKeepAliveTime,
      Duration keepAliveTime,
      Duration keepAliveTimeout,
      Duration shutdownTimeout,
      Duration heartbeatInterval,
      ReferenceCheck referenceCheck,
      Duration restMaxWait,
      Path publishDir,
      FilePublisher.Format publishFormat,
      Tls tls,
      Integer restPort,
      boolean allowPlaintextSecrets,
      String csdsIdentity,
      String controlPlaneId,
      Bounds bounds,
      java.util.Set<String> authorities,
      java.util.List<String> adminAllowedHosts,
      boolean publishSecrets,
      boolean allowEmptying,
      RuleCheck ruleCheck) {
    public static final String DEFAULT_ADMIN_BIND = "127.0.0.1";

    /**
     * TLS on the xDS and REST ports (issue 20): PEM certificate chain and key; {@code clientCa}, a
     * PEM bundle client certificates must chain to (mTLS), or null for TLS without client
     * certificates. The files are re-read when they change.
     */
    public record Tls(Path cert, Path key, Path clientCa) {}

    public Options {
      if (pollMillis <= 0) {
        pollMillis = 1000;
      }
      if (adminBind == null) {
        adminBind = DEFAULT_ADMIN_BIND;
      }
      if (maxConnectionAgeGrace == null) {
        maxConnectionAgeGrace = Duration.ofSeconds(10);
      }
      if (permitKeepAliveTime == null) {
        permitKeepAliveTime = Duration.ofSeconds(5);
      }
      if (keepAliveTime == null) {
        keepAliveTime = Duration.ofSeconds(30);
      }
      if (keepAliveTimeout == null) {
        keepAliveTimeout = Duration.ofSeconds(10);
      }
      if (shutdownTimeout == null) {
        shutdownTimeout = Duration.ofSeconds(10);
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
      if (bounds == null) {
        bounds = Bounds.DEFAULT;
      }
      if (ruleCheck == null) {
        ruleCheck = RuleCheck.ENVOY;
      }
      authorities = authorities == null ? java.util.Set.of() : java.util.Set.copyOf(authorities);
      adminAllowedHosts = adminAllowedHosts == null ? java.util.List.of()
          : adminAllowedHosts.stream().map(AdminAccess::checkAllowedHost).distinct().toList();
    }

    /** The essential options; everything else takes its default. */
    public Options(Path config, String bind, int xdsPort, int httpPort, long pollMillis) {
      this(config, bind, xdsPort, httpPort, pollMillis, null, null, null, null, null, null, null,
          null, null, null, null, null, null, null, false, null, null, null, null, null, false,
          false, null);
    }

    public Options withAdminBind(String v) {
      return with(o -> o.adminBind = v);
    }

    public Options withMaxConnectionAge(Duration age, Duration grace) {
      return with(o -> {
        o.maxConnectionAge = age;
        o.maxConnectionAgeGrace = grace;
      });
    }

    public Options withKeepAlive(Duration permit, Duration time, Duration timeout) {
      return with(o -> {
        o.permitKeepAliveTime = permit;
        o.keepAliveTime = time;
        o.keepAliveTimeout = timeout;
      });
    }

    public Options withShutdownTimeout(Duration v) {
      return with(o -> o.shutdownTimeout = v);
    }

    public Options withHeartbeatInterval(Duration v) {
      return with(o -> o.heartbeatInterval = v);
    }

    public Options withReferenceCheck(ReferenceCheck v) {
      return with(o -> o.referenceCheck = v);
    }

    /** {@code --validation}: {@link RuleCheck#OFF} serves what Envoy would refuse. */
    public Options withRuleCheck(RuleCheck v) {
      return with(o -> o.ruleCheck = v);
    }

    public Options withRestMaxWait(Duration v) {
      return with(o -> o.restMaxWait = v);
    }

    public Options withPublish(Path dir, FilePublisher.Format format) {
      return with(o -> {
        o.publishDir = dir;
        o.publishFormat = format;
      });
    }

    /**
     * Whether {@code publishDir} gets each group's Secrets too ({@code --publish-secrets}), private
     * keys in plain text in 0600 files; default false.
     */
    public Options withPublishSecrets(boolean v) {
      return with(o -> o.publishSecrets = v);
    }

    /** TLS (and with a client CA, mTLS) on the xDS and REST ports; null: plaintext. */
    public Options withTls(Tls v) {
      return with(o -> o.tls = v);
    }

    /** REST-JSON discovery on its own port (0: ephemeral); null: off. */
    public Options withRestPort(Integer v) {
      return with(o -> o.restPort = v);
    }

    /** Streams without a verified identity get Secrets too (local development). */
    public Options withAllowPlaintextSecrets(boolean v) {
      return with(o -> o.allowPlaintextSecrets = v);
    }

    /**
     * Under mTLS, the identities (a glob) allowed to read CSDS, which shows every connected
     * client's config; null: none. Without mTLS CSDS answers anyone who reaches the port.
     */
    public Options withCsdsIdentity(String glob) {
      return with(o -> o.csdsIdentity = glob);
    }

    /**
     * The identifier every response carries as {@code control_plane.identifier}, naming this
     * replica (issue 21); null: {@code meridian@<host name>}.
     */
    public Options withControlPlaneId(String id) {
      return with(o -> o.controlPlaneId = id);
    }

    /**
     * The xdstp authorities this server serves (issue 26, gRFC A47; {@code --authority}): a request
     * for a name of another authority is answered as does-not-exist. Empty: every authority in
     * the config.
     */
    public Options withAuthorities(java.util.Set<String> v) {
      return with(o -> o.authorities = v);
    }

    /**
     * One {@code --admin-allowed-hosts} entry, normalized: a host name or an IP address, or
     * {@code *}.
     *
     * @throws IllegalArgumentException saying what is wrong with it
     */
    public static String checkAdminAllowedHost(String host) {
      return AdminAccess.checkAllowedHost(host);
    }

    /**
     * The host names and addresses the admin port answers to besides {@code localhost}, loopback
     * addresses and the address it is bound to ({@code --admin-allowed-hosts}; a request naming
     * another host is refused 421, docs/security.md); {@code *}: any host.
     *
     * @throws IllegalArgumentException for an entry that is neither a host name nor an address
     */
    public Options withAdminAllowedHosts(java.util.List<String> v) {
      return with(o -> o.adminAllowedHosts = v);
    }

    /**
     * Whether a reload (file or etcd) that would empty what is served is applied: the whole
     * config, a type clients subscribe to, a config file left blank. Default false: it is held,
     * logged and shown, and the last good config stays.
     */
    public Options withAllowEmptying(boolean v) {
      return with(o -> o.allowEmptying = v);
    }

    /** What one client may take of the server (issue 25, docs/reliability.md). */
    public Options withBounds(Bounds v) {
      return with(o -> o.bounds = v);
    }

    /** A copy with {@code change} made to its fields (normalized as any new Options). */
    private Options with(java.util.function.Consumer<Fields> change) {
      Fields f = new Fields(this);
      change.accept(f);
      return f.build();
    }

    /** The fields of an Options, to change some and build another. */
    private static final class Fields {
      Path config;
      String bind;
      int xdsPort;
      int httpPort;
      long pollMillis;
      String adminBind;
      Duration maxConnectionAge;
      Duration maxConnectionAgeGrace;
      Duration permitKeepAliveTime;
      Duration keepAliveTime;
      Duration keepAliveTimeout;
      Duration shutdownTimeout;
      Duration heartbeatInterval;
      ReferenceCheck referenceCheck;
      Duration restMaxWait;
      Path publishDir;
      FilePublisher.Format publishFormat;
      Tls tls;
      Integer restPort;
      boolean allowPlaintextSecrets;
      String csdsIdentity;
      String controlPlaneId;
      Bounds bounds;
      java.util.Set<String> authorities;
      java.util.List<String> adminAllowedHosts;
      boolean publishSecrets;
      boolean allowEmptying;
      RuleCheck ruleCheck;

      Fields(Options o) {
        config = o.config;
        bind = o.bind;
        xdsPort = o.xdsPort;
        httpPort = o.httpPort;
        pollMillis = o.pollMillis;
        adminBind = o.adminBind;
        maxConnectionAge = o.maxConnectionAge;
        maxConnectionAgeGrace = o.maxConnectionAgeGrace;
        permitKeepAliveTime = o.permitKeepAliveTime;
        keepAliveTime = o.keepAliveTime;
        keepAliveTimeout = o.keepAliveTimeout;
        shutdownTimeout = o.shutdownTimeout;
        heartbeatInterval = o.heartbeatInterval;
        referenceCheck = o.referenceCheck;
        restMaxWait = o.restMaxWait;
        publishDir = o.publishDir;
        publishFormat = o.publishFormat;
        tls = o.tls;
        restPort = o.restPort;
        allowPlaintextSecrets = o.allowPlaintextSecrets;
        csdsIdentity = o.csdsIdentity;
        controlPlaneId = o.controlPlaneId;
        bounds = o.bounds;
        authorities = o.authorities;
        adminAllowedHosts = o.adminAllowedHosts;
        publishSecrets = o.publishSecrets;
        allowEmptying = o.allowEmptying;
        ruleCheck = o.ruleCheck;
      }

      Options build() {
        return new Options(config, bind, xdsPort, httpPort, pollMillis, adminBind, maxConnectionAge,
            maxConnectionAgeGrace, permitKeepAliveTime, keepAliveTime, keepAliveTimeout,
            shutdownTimeout, heartbeatInterval, referenceCheck, restMaxWait, publishDir,
            publishFormat, tls, restPort, allowPlaintextSecrets, csdsIdentity,
            controlPlaneId, bounds, authorities, adminAllowedHosts, publishSecrets,
            allowEmptying, ruleCheck);
      }
    }


    HeartbeatPolicy heartbeats() {
      return heartbeatInterval == null ? HeartbeatPolicy.DEFAULT
          : HeartbeatPolicy.fixed(heartbeatInterval);
    }
  }

  /**
   * What a server names itself without {@code --control-plane-id}: {@code meridian@} and the host
   * name (in Kubernetes, the pod's name), else the {@code HOSTNAME} variable, else
   * {@code meridian@unknown}.
   */
  public static String defaultControlPlaneId() {
    return defaultControlPlaneId(() -> java.net.InetAddress.getLocalHost().getHostName(),
        System.getenv("HOSTNAME"));
  }

  /** The host name lookup, for tests. */
  interface HostName {
    String get() throws IOException;
  }

  static String defaultControlPlaneId(HostName lookup, String hostnameVariable) {
    String host = null;
    try {
      host = lookup.get();
    } catch (IOException | RuntimeException e) {
      // no resolvable local host name: fall back to the variable
    }
    if (host == null || host.isBlank()) {
      host = hostnameVariable;
    }
    if (host == null || host.isBlank()) {
      host = "unknown";
    }
    return "meridian@" + host.strip();
  }

    /** The TLS files given cannot serve (each problem names its flag and file). */
  public static final class InvalidTls extends IOException {
    private final List<String> problems;

    InvalidTls(List<String> problems) {
      super(String.join("; ", problems));
      this.problems = List.copyOf(problems);
    }

    public List<String> problems() {
      return problems;
    }
  }

  /**
   * A port the server cannot listen on; the message names its address, the flag that set it and
   * what to do, e.g. {@code cannot listen on 0.0.0.0:18000 (--xds-port 18000): the address is
   * already in use: ...}.
   */
  public static final class CannotListen extends IOException {
    CannotListen(String message, Throwable cause) {
      super(message, cause);
    }
  }

  private final Options options;
  /** The hub, its pools, the xDS services and gRPC server: the engine the embedding API runs on. */
  private final EmbeddedServer engine;
  private final DiscoveryHub hub;
  /** Builds the served configs; counts the resources it serializes (the metrics read it). */
  private final ConfigLoader loader;
  private ConfigWatcher watcher;
  /** The config store, or null when the config is a file. */
  private final ConfigSource source;
  private AdminHttpServer http;
  private RestHttpServer rest;
  private RestDiscovery restDiscovery;
  private ServerTls tls;
  private volatile boolean serving;
  /** What {@code /logging} changes (the CLI's backend); null: not Meridian's to change. */
  private LogLevels logLevels;
  private final java.util.concurrent.atomic.AtomicBoolean closing =
      new java.util.concurrent.atomic.AtomicBoolean();
  private final java.util.concurrent.CountDownLatch closed = new java.util.concurrent.CountDownLatch(1);

  public MeridianServer(Options options) {
    this(options, null);
  }

  /**
   * A server whose config comes from {@code source} (etcd) instead of {@code options.config()}:
   * the ports open at once, {@code /readyz} is 503 and xDS calls fail UNAVAILABLE until the first
   * config arrives; then every config the source delivers is served as a file reload is.
   */
  public MeridianServer(Options options, ConfigSource source) {
    this.options = options;
    this.loader = new ConfigLoader(options.ruleCheck());
    this.source = source;
    this.engine = new EmbeddedServer(new EmbeddedServer.Settings(
        options.controlPlaneId() != null ? options.controlPlaneId() : defaultControlPlaneId(),
        options.heartbeatInterval(), options.allowPlaintextSecrets(),
        options.permitKeepAliveTime(), options.keepAliveTime(), options.keepAliveTimeout(),
        options.maxConnectionAge(), options.maxConnectionAgeGrace(), options.shutdownTimeout(),
        options.bounds(), options.authorities(), options.adminAllowedHosts()));
    this.hub = engine.hub();
    hub.metrics().resourcesSerializedBy(source == null ? loader::resourcesSerialized
        : source::resourcesSerialized);
  }

  /** Lets {@code /logging} on the admin port change these levels at runtime; call before start. */
  public MeridianServer logLevels(LogLevels levels) {
    this.logLevels = levels;
    return this;
  }

  public MeridianServer start() throws ConfigException, IOException {
    try {
      Listening.check(ports());
    } catch (CannotListen e) {
      abandon();
      throw e;
    }
    if (options.tls() != null) {
      Options.Tls t = options.tls();
      try {
        tls = engine.loadTls(new EmbeddedServer.TlsFiles(t.cert(), t.key(), t.clientCa()));
      } catch (ServerTls.InvalidTlsFiles e) {
        if (source != null) {
          source.close(); // the server owns its source from the start
        }
        throw new InvalidTls(e.problems);
      }
    }
    warnAboutTrust();
    if (options.ruleCheck() == RuleCheck.OFF) {
      LOG.warn(LogLine.of("validation_off")
          .kv("risk", "a resource Envoy would refuse is served, and every Envoy of its group "
              + "rejects the whole response that carries it")
          .kv("fix", "--validation envoy (the default)").toString());
    }
    if (source == null) {
      loadFiles();
    } else {
      // The store's first read overlaps the ports' start; until it lands the hub is not loaded,
      // so /readyz is 503 and xDS calls are refused (NotLoadedYet).
      hub.metrics().storeStatusBy(source::status);
      source.start(storeSink());
    }
    Listening.Port[] ports = ports().toArray(Listening.Port[]::new);
    Listening.Port binding = ports[0];
    try {
      binding = ports[1];
      http = new AdminHttpServer(new InetSocketAddress(options.adminBind(), options.httpPort()),
          () -> !closing.get(), this::isReady, hub, source, logLevels, options.bounds(),
          options.adminAllowedHosts());
      engine.own(http); // closed with the engine, after its streams ended
      if (options.restPort() != null) {
        // REST-JSON discovery has a port of its own (issue 20): the admin port serves only admin.
        HttpExecutor restExecutor = new HttpExecutor("meridian-rest", options.bounds(), hub.metrics());
        restDiscovery = new RestDiscovery(hub, Clock.systemUTC(), options.heartbeats(),
            engine.streamPool(), engine.ticker(), options.restMaxWait(),
            options.allowPlaintextSecrets(), options.bounds(), restExecutor,
            engine.requestMemory());
        binding = ports[2];
        try {
          rest = new RestHttpServer(new InetSocketAddress(options.bind(), options.restPort()),
              restDiscovery, tls, restExecutor);
        } catch (IOException | RuntimeException e) {
          restExecutor.close(); // its watchdog thread too
          throw e;
        }
        engine.own(rest);
      }
      if (closing.get()) {
        throw new IOException("closed while starting");
      }
      binding = ports[0];
      engine.start(new InetSocketAddress(options.bind(), options.xdsPort()), tls,
          options.csdsIdentity());
    } catch (IOException e) {
      // Taken since the check above (by another process, say): nothing was served, so the
      // start ends without a shutdown line.
      abandon();
      throw Listening.translate(binding, e);
    }
    serving = true;
    updateHealth();
    return this;
  }

  /** The ports to listen on, the xDS port first, with the flags that set them. */
  private List<Listening.Port> ports() {
    List<Listening.Port> ports = new ArrayList<>(List.of(
        new Listening.Port("--xds-port", options.xdsPort(), "--bind", options.bind()),
        new Listening.Port("--http-port", options.httpPort(), "--admin-bind",
            options.adminBind())));
    if (options.restPort() != null) {
      ports.add(new Listening.Port("--rest-port", options.restPort(), "--bind", options.bind()));
    }
    return ports;
  }

  /** Ends a start that failed before it served anything: as close, without a shutdown line. */
  private void abandon() {
    if (!closing.compareAndSet(false, true)) {
      return;
    }
    serving = false;
    if (watcher != null) {
      watcher.close();
    }
    if (source != null) {
      source.close();
    }
    engine.abandon();
    closed.countDown();
  }

  /**
   * How reloads that would empty something are judged: the whole config and a blank file always
   * hold; a type emptied in a group holds when a connected stream of the group subscribes to it,
   * or when clients the server cannot see may (REST-JSON polls between two polls, readers of
   * published files).
   */
  private Emptying.Guard emptyingGuard() {
    boolean unseenClients = options.restPort() != null || options.publishDir() != null;
    return new Emptying.Guard(options.allowEmptying(),
        (group, type) -> unseenClients || hub.subscribed(group, type));
  }

  /** The config file: loaded once before the ports open (an invalid one stops the start). */
  private void loadFiles() throws ConfigException, IOException {
    watcher = new ConfigWatcher(options.config(), loader, loaded -> {
      long pushStarted = System.nanoTime();
      // A rejection keeps the served config as the one the watcher compares with; it reports it.
      Served served = serve(loaded);
      long pushMillis = (System.nanoTime() - pushStarted) / 1_000_000;
      hub.reloaded(served.changed(), withNotRead(warnNotRead(), served.warnings()));
      LOG.info(LogLine.of("config_reload").kv("result", "ok")
          .kv("resources", loaded.resources()).kv("groups", loaded.groups() + 1)
          .kv("files", loaded.files().size()).kv("changed", served.changed())
          .kv("load_ms", loaded.loadMillis()).kv("dispatch_ms", pushMillis).toString());
    }, new ConfigWatcher.Reports() {
      @Override
      public void failed(ConfigException error) {
        if (error instanceof ConfigHeld held) {
          reportHeld(held, null, 0);
          return;
        }
        hub.reloadRejected(error.problems());
        LOG.error(LogLine.of("config_reload").kv("result", "failed")
            .kv("serving", "last good config").kv("error", error.getMessage()).toString());
      }

      @Override
      public void recovered() {
        reportRecovered(null, 0);
      }
    }, options.pollMillis()).guard(emptyingGuard());
    ConfigLoader.Loaded first;
    try {
      first = watcher.start();
    } catch (ConfigException e) {
      watcher.close();
      throw e;
    }
    ConfigChecks.Result checks = check(first.config());
    if (checks.rejected()) {
      watcher.close();
      throw new ConfigException(checks.rejectionMessages());
    }
    if (options.publishDir() != null) {
      FilePublisher publisher = filePublisher();
      hub.register(publisher.listener());
      publisher.publish(first.config());
    }
    hub.reloaded(hub.update(first.config()), withNotRead(warnNotRead(), warningsOf(checks)));
    LOG.info(LogLine.of("config_load").kv("result", "ok")
        .kv("resources", first.resources()).kv("groups", first.groups() + 1)
        .kv("path", options.config()).kv("files", first.files().size())
        .kv("read", ConfigDirectory.names(options.config(), first.files(), READ_NAMES))
        .toString());
  }

  /** How many file names the config_load line lists; the rest are counted. */
  private static final int READ_NAMES = 50;

  /** The config_not_read warnings of the last load: a reload logs only those that are new. */
  private java.util.Set<String> notReadWarned = java.util.Set.of();

  /**
   * Warns about what the config directory holds that looks meant as config and is not read (a
   * subdirectory, {@code x.yaml.bak}); each once, and again only after it was gone.
   */
  private synchronized List<String> warnNotRead() {
    java.util.Set<String> now = new java.util.LinkedHashSet<>();
    try {
      for (ConfigDirectory.NotRead n : ConfigDirectory.scan(options.config()).warnings()) {
        now.add(n.logLine());
      }
    } catch (ConfigException e) {
      return List.of(); // gone since the load: the next load says so
    }
    for (String line : now) {
      if (!notReadWarned.contains(line)) {
        LOG.warn("{}", line);
      }
    }
    notReadWarned = now;
    return List.copyOf(now);
  }

  /** The load's warnings for /status: what the directory does not read, then serve's checks'. */
  private static List<String> withNotRead(List<String> notRead, List<String> checks) {
    List<String> all = new ArrayList<>(notRead);
    all.addAll(checks);
    return all;
  }

  /** The {@code --publish-dir} publisher: what it could not write shows in /status and metrics. */
  private FilePublisher filePublisher() {
    return new FilePublisher(options.publishDir(), options.publishFormat(), hub.controlPlane(),
        options.publishSecrets(), hub::published);
  }

  /** A config put in force: how many resources changed, and what serve's checks warned about. */
  private record Served(int changed, List<String> warnings) {}

  private static List<String> warningsOf(ConfigChecks.Result checks) {
    return checks.warnings().stream().map(ConfigChecks.Finding::toString).toList();
  }

  /** Puts a config in force: serve's checks, then the hub; throws to keep the last one. */
  private Served serve(ConfigLoader.Loaded loaded) throws ConfigException {
    ConfigChecks.Result checks = check(loaded.config());
    if (checks.rejected()) {
      List<String> why = new ArrayList<>(List.of("config rejected ("
          + checks.rejectedBy("--tls-client-ca") + ")"));
      why.addAll(checks.rejectionMessages());
      throw new ConfigException(why);
    }
    return new Served(hub.update(loaded.config()), warningsOf(checks));
  }

  /**
   * A held reload: an ERROR line naming what it would remove, counted and shown. {@code store}:
   * the config store and the revision held, or null for the config files.
   */
  private void reportHeld(ConfigHeld held, String store, long revision) {
    hub.reloadHeld(held.found().all());
    LogLine line = LogLine.of("config_reload").kv("result", "held").kv("reason", "emptying");
    if (store != null) {
      line.kv("source", store).kv("revision", revision);
    }
    LOG.error(line.kv("removes", String.join("; ", held.found().all()))
        .kv("serving", "last good config")
        .kv("fix", "restore the config; to apply emptyings, serve --allow-emptying").toString());
  }

  /**
   * After a failure or a hold the source holds what is served again: nothing to apply, and the
   * state shown is ok. {@code store}: as for {@link #reportHeld}.
   */
  private void reportRecovered(String store, long revision) {
    ReloadStatus.Result was = hub.reloads().state();
    hub.reloadRecovered();
    LogLine line = LogLine.of("config_reload").kv("result", "recovered")
        .kv("was", was == null ? null : was.label());
    if (store != null) {
      line.kv("source", store).kv("revision", revision);
    }
    LOG.info(line.kv("serving", "the config in force, unchanged").toString());
  }

  /** The store's configs: each served as a file reload is; the first makes the server ready. */
  private ConfigSource.Sink storeSink() {
    FilePublisher publisher = options.publishDir() == null ? null : filePublisher();
    Emptying.Guard guard = emptyingGuard();
    return new ConfigSource.Sink() {
      private boolean first = true;
      /** The config last put in force: what a new one is judged against for emptying. */
      private ServedConfig served;
      /** The revision of the config last given, for the line that says it is held. */
      private long given;

      @Override
      public void apply(ConfigLoader.Loaded loaded, long revision) throws ConfigException {
        long started = System.nanoTime();
        given = revision;
        if (served != null) {
          // Keys all deleted, or a type's: held as a file that empties it is.
          Emptying.Found found = Emptying.find(served, loaded.config(), List.of(), List.of(),
              guard.subscribers());
          if (guard.holds(found)) {
            throw new ConfigHeld(found); // reported in failed(), as a rejection is
          }
          if (found.any()) {
            LOG.warn(LogLine.of("config_emptying").kv("source", source.describe())
                .kv("revision", revision).kv("removes", String.join("; ", found.all()))
                .kv("because", found.holds() ? "--allow-emptying" : "no client subscribes to it")
                .toString());
          }
        }
        // A rejection reaches failed() too (the source reports it there): counted there, once.
        Served result = serve(loaded);
        served = loaded.config();
        int changed = result.changed();
        if (first && publisher != null) {
          // Only a config that is served is published; later ones reach it as a hub listener.
          publisher.publish(loaded.config());
          hub.register(publisher.listener());
        }
        hub.reloaded(changed, result.warnings());
        updateHealth();
        LOG.info(LogLine.of(first ? "config_load" : "config_reload")
            .kv("result", "ok").kv("source", source.describe())
            .kv("revision", revision)
            .kv("resources", loaded.resources()).kv("groups", loaded.groups() + 1)
            .kv("changed", changed).kv("load_ms", loaded.loadMillis())
            .kv("dispatch_ms", (System.nanoTime() - started) / 1_000_000).toString());
        first = false;
      }

      @Override
      public void failed(ConfigException problems) {
        if (problems instanceof ConfigHeld held) {
          reportHeld(held, source.describe(), given);
          return;
        }
        hub.reloadRejected(problems.problems());
        LOG.error(LogLine.of("config_reload").kv("result", "failed")
            .kv("source", source.describe())
            .kv("serving", hub.isLoaded() ? "last good config" : "nothing yet")
            .kv("error", problems.getMessage()).toString());
      }

      @Override
      public void recovered(long revision) {
        reportRecovered(source.describe(), revision);
      }
    };
  }

  /** Says at start what an operator should know about who can get what (docs/security.md). */
  private void warnAboutTrust() {
    if (tls == null && !isLoopback(options.bind())) {
      LOG.warn(LogLine.of("plaintext_xds").kv("bind", options.bind())
          .kv("risk", "anyone who reaches the port can claim any node id; Secrets go to no one")
          .kv("fix", "--tls-cert, --tls-key and --tls-client-ca (docs/security.md)").toString());
    }
    if (options.allowPlaintextSecrets()) {
      LOG.warn(LogLine.of("plaintext_secrets")
          .kv("risk", "streams without a verified client certificate receive Secrets, private "
              + "keys included").kv("meant_for", "local development").toString());
    }
  }

  private static boolean isLoopback(String address) {
    try {
      return java.net.InetAddress.getByName(address).isLoopbackAddress();
    } catch (java.net.UnknownHostException e) {
      return false;
    }
  }

  /**
   * Runs the checks of every load ({@link ConfigChecks}, the same that {@code meridian validate}
   * runs) and logs what they found; a config with API listeners gets the grpc profile (issue 5).
   */
  /** What the checks of the last load found in each resource: a reload looks into what changed. */
  private final dev.meridian.internal.config.InlineKeys.Memo inlineKeys =
      new dev.meridian.internal.config.InlineKeys.Memo();

  private ConfigChecks.Result check(ServedConfig config) {
    // Under mTLS keys go by identity, in Secrets: key material inlined elsewhere is refused.
    ConfigChecks.Result r = ConfigChecks.run(config, options.referenceCheck(),
        options.tls() != null && options.tls().clientCa() != null, inlineKeys);
    for (ConfigChecks.Finding f : r.rejections()) {
      LOG.warn("{}", f);
    }
    for (ConfigChecks.Finding f : r.warnings()) {
      LOG.warn("{}", f);
    }
    return r;
  }

  public int xdsPort() {
    return engine.port();
  }

  /** The REST-JSON port, or -1 when it is off. */
  public int restPort() {
    return rest == null ? -1 : rest.port();
  }

  /** REST-JSON polls held now (0 without the REST port). */
  int restLongPolls() {
    return restDiscovery == null ? 0 : restDiscovery.held();
  }

  public int httpPort() {
    return http.port();
  }

  /** xDS connections open now, counted from accept. */
  int connectionsOpen() {
    return engine.connectionsOpen();
  }

  /** Bytes of xDS request messages received in part, now. */
  long partialMessageBytes() {
    return engine.partialMessageBytes();
  }

  /** The streams a peer holds now ("address 127.0.0.2", "identity spiffe://..."). */
  int streamsOfPeer(String peer) {
    return engine.streamsOfPeer(peer);
  }

  /** The address the HTTP (admin) port is bound to. */
  public InetSocketAddress httpAddress() {
    return http.address();
  }

  /** The requests this server holds at once ({@code --max-request-memory}). */
  RequestMemory requestMemory() {
    return engine.requestMemory();
  }

  public DiscoveryHub hub() {
    return hub;
  }

  /** Returns once the gRPC server has terminated and, if {@link #close} runs, once it is done. */
  public void awaitTermination() throws InterruptedException {
    engine.awaitTermination();
    if (closing.get()) {
      closed.await();
    }
  }

  /**
   * Graceful shutdown, bounded by {@link Options#shutdownTimeout}: {@code /readyz} turns 503, the
   * gRPC server stops accepting and sends GOAWAY, each stream hands the transport what it has queued
   * and ends with UNAVAILABLE (clients reconnect, to another replica if any); what has not ended by
   * the deadline is cancelled. Idempotent.
   */
  @Override
  public void close() {
    if (!closing.compareAndSet(false, true)) {
      return;
    }
    serving = false;
    engine.stopServingHealth(); // NOT_SERVING from the first instant of a shutdown, as /readyz
    if (watcher != null) {
      watcher.close();
    }
    if (source != null) {
      source.close();
    }
    engine.close(); // health NOT_SERVING at once, streams drained, then the ports closed
    closed.countDown();
  }

  /** The gRPC health service follows readiness; after a shutdown began it stays NOT_SERVING. */
  private void updateHealth() {
    engine.updateHealth(isReady());
  }

  /** Readiness ({@code /readyz}): the config is loaded, gRPC is serving and no shutdown began. */
  public boolean isReady() {
    return serving && !closing.get() && hub.isLoaded();
  }

  /** True once {@link #close} has started. */
  public boolean isClosing() {
    return closing.get();
  }
}
