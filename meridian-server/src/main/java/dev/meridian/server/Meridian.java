package dev.meridian.server;

import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.internal.server.Bounds;
import dev.meridian.internal.server.EmbeddedServer;
import dev.meridian.internal.server.MeridianServer;
import io.grpc.BindableService;
import io.grpc.ServerServiceDefinition;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Meridian embedded in an application: the application computes config and publishes it
 * ({@link #publisher()}); Meridian serves it over every xDS variant to every client, on a gRPC
 * server of its own ({@link #start}) or on the application's ({@link #xdsServices()}).
 *
 * <pre>{@code
 * Meridian meridian = Meridian.builder()
 *     .grouping((node, identity) -> node.getCluster())
 *     .build();
 * meridian.publisher().set("frontend", List.of(cluster, endpoints, listener, routes));
 * meridian.start(18000);
 * }</pre>
 *
 * Every instance is independent: two Meridians in one JVM share no state. See docs/embedding.md.
 */
public final class Meridian implements AutoCloseable {
  private final EmbeddedServer engine;
  private final Publisher publisher;
  private final Admin admin;
  private final CallbackDispatcher callbacks;
  private final Duration shutdownTimeout;
  private final EmbeddedServer.TlsFiles tls;
  private final String csdsIdentity;

  private Meridian(Builder b) {
    this.shutdownTimeout = b.shutdownTimeout;
    this.tls = b.tls;
    this.csdsIdentity = b.csdsIdentity;
    this.engine = new EmbeddedServer(new EmbeddedServer.Settings(
        b.controlPlaneId != null ? b.controlPlaneId : MeridianServer.defaultControlPlaneId(),
        b.heartbeatInterval, b.allowPlaintextSecrets, b.permitKeepAliveTime, b.keepAliveTime,
        b.keepAliveTimeout, b.maxConnectionAge, b.maxConnectionAgeGrace, b.shutdownTimeout,
        b.bounds, b.authorities, b.adminAllowedHosts));
    this.callbacks = b.callbacks == null ? null
        : new CallbackDispatcher(b.callbacks, b.callbackQueue);
    if (b.metricsRegistry != null) {
      try {
        engine.metricsInto(b.metricsRegistry);
      } catch (IllegalArgumentException e) {
        engine.close(); // its threads are started; nothing was published yet
        throw e;
      }
    }
    engine.hub().events(callbacks);
    this.publisher = new Publisher(engine.hub(), placer(b.grouping), b.validation, b.rules,
        b.keysOnlyInSecrets != null ? b.keysOnlyInSecrets : b.tls != null && b.tls.clientCa() != null,
        engine::updateHealth);
    engine.resourcesSerializedBy(publisher::resourcesSerialized);
    this.admin = new Admin(engine);
  }

  private static ServedConfig.Placer placer(NodeGrouping grouping) {
    return (node, identity) -> {
      String group;
      try {
        group = grouping.groupOf(node, identity);
      } catch (RuntimeException e) {
        return new ServedConfig.Placement("", "the application's node grouping failed for node '"
            + node.getId() + "': " + e);
      }
      return group == null
          ? new ServedConfig.Placement("", "the application's node grouping placed node '"
              + node.getId() + "' in no group")
          : new ServedConfig.Placement(group, null);
    };
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Where the application publishes config. */
  public Publisher publisher() {
    return publisher;
  }

  /**
   * Every xDS discovery service (ADS and per-type, State of the World and Incremental), to add to
   * the application's own {@code ServerBuilder} with its TLS and interceptors. Each call knows
   * its peer and, under mTLS, its client's identity. Until the first publication calls fail
   * UNAVAILABLE. For a gRPC server the application builds itself, give it
   * {@code directExecutor()}: Meridian's handlers never block.
   */
  public List<ServerServiceDefinition> xdsServices() {
    return engine.xdsServices();
  }

  /**
   * CSDS ({@code envoy.service.status.v3.ClientStatusDiscoveryService}): every client's config.
   * Not part of {@link #xdsServices()}: add it only where operators, not workloads, can call it.
   */
  public ServerServiceDefinition csdsService() {
    return engine.csdsService();
  }

  /** The standard gRPC health service, SERVING while {@link #isReady()}. */
  public BindableService healthService() {
    return engine.healthService();
  }

  /**
   * Serves on a gRPC server of Meridian's own on every address at {@code port} (0: any free
   * port): {@link #xdsServices()}, CSDS and health. With {@link Builder#tls}, TLS or mTLS.
   *
   * @return this, once the port is open
   */
  public Meridian start(int port) throws IOException {
    return start(new InetSocketAddress(port));
  }

  /** As {@link #start(int)}, on one address. */
  public Meridian start(InetSocketAddress address) throws IOException {
    engine.start(address, tls, csdsIdentity);
    return this;
  }

  /** The port {@link #start} opened, or -1. */
  public int port() {
    return engine.port();
  }

  /** The admin data and endpoints. */
  public Admin admin() {
    return admin;
  }

  /** Ready to serve: something was published and {@link #close} has not begun. */
  public boolean isReady() {
    return engine.isReady();
  }

  /** Callback events dropped because the callback queue was full. */
  public long callbackEventsDropped() {
    return callbacks == null ? 0 : callbacks.dropped();
  }

  /**
   * Ends every stream gracefully (each hands the transport what it has queued, then ends
   * UNAVAILABLE so clients reconnect, to another replica if any), bounded by the shutdown
   * timeout; stops the server and admin port Meridian opened; delivers the queued callbacks.
   * On the application's own gRPC server, call it before that server's shutdown. Idempotent.
   */
  @Override
  public void close() {
    engine.close();
    if (callbacks != null) {
      callbacks.close(shutdownTimeout);
    }
  }

  /** Settings of a {@link Meridian}; every one has a default. */
  public static final class Builder {
    private String controlPlaneId;
    private final java.util.Set<String> authorities = new java.util.LinkedHashSet<>();
    private NodeGrouping grouping = NodeGrouping.everyone(ServedConfig.DEFAULT_GROUP);
    private Validation validation = Validation.OFF;
    private RuleSet rules = RuleSet.ENVOY;
    private DiscoveryCallbacks callbacks;
    private int callbackQueue = 65_536;
    private Duration heartbeatInterval;
    private boolean allowPlaintextSecrets;
    private Duration permitKeepAliveTime = Duration.ofSeconds(5);
    private Duration keepAliveTime = Duration.ofSeconds(30);
    private Duration keepAliveTimeout = Duration.ofSeconds(10);
    private Duration maxConnectionAge;
    private Duration maxConnectionAgeGrace = Duration.ofSeconds(10);
    private Duration shutdownTimeout = Duration.ofSeconds(10);
    private EmbeddedServer.TlsFiles tls;
    private String csdsIdentity;
    /** Null: as {@link #tls} says (on with a client CA). */
    private Boolean keysOnlyInSecrets;
    private PrometheusRegistry metricsRegistry;
    private Bounds bounds = Bounds.DEFAULT;
    private final java.util.List<String> adminAllowedHosts = new java.util.ArrayList<>();

    private Builder() {}

    /**
     * The most xDS streams open at once, across every server {@link Meridian#xdsServices()} are
     * added to; one more is refused RESOURCE_EXHAUSTED, the open ones notice nothing. Default
     * 100,000 (docs/reliability.md).
     */
    public Builder maxStreams(int max) {
      this.bounds = bounds.withMaxStreams(max);
      return this;
    }

    /**
     * For {@link Meridian#start}: HTTP/2 MAX_CONCURRENT_STREAMS, the most streams one connection
     * may have open; gRPC clients queue more until one ends. Default 1,000.
     */
    public Builder maxStreamsPerConnection(int max) {
      this.bounds = bounds.withMaxStreamsPerConnection(max);
      return this;
    }

    /**
     * The requests a second one stream may send on average, with ten seconds' worth at once and
     * one more per response it is sent (its ACK); a stream beyond is closed RESOURCE_EXHAUSTED.
     * Applies to {@link Meridian#xdsServices()} on any server. Default 100.
     */
    public Builder maxRequestRate(int perSecond) {
      this.bounds = bounds.withMaxRequestRate(perSecond);
      return this;
    }

    /**
     * The most resource names one request may carry, and one stream may be subscribed to over
     * every type; beyond, the stream ends RESOURCE_EXHAUSTED. Applies to {@link
     * Meridian#xdsServices()} on any server. Default 100,000.
     */
    public Builder maxResourceNames(int max) {
      this.bounds = bounds.withMaxResourceNames(max);
      return this;
    }

    /**
     * Encoded bytes of requests the server holds at once, read and not yet handled (gRPC, and
     * REST-JSON polls of {@link Meridian#start}'s server); a request beyond is refused
     * RESOURCE_EXHAUSTED and retried by its client. Default: an eighth of the heap, at least
     * {@link #maxRequestBytes}.
     */
    public Builder maxRequestMemory(long bytes) {
      this.bounds = bounds.withMaxRequestMemory(bytes);
      return this;
    }

    /**
     * For {@link Meridian#start}: the largest request message accepted; a larger one fails its
     * stream RESOURCE_EXHAUSTED. Default 16 MiB.
     */
    public Builder maxRequestBytes(int bytes) {
      this.bounds = bounds.withMaxRequestBytes(bytes);
      return this;
    }

    /**
     * For {@link Meridian#start}: RST_STREAM frames one connection may send in 10 seconds before
     * it is closed (HTTP/2 rapid reset). Default 200.
     */
    public Builder maxStreamResets(int per10Seconds) {
      this.bounds = bounds.withMaxStreamResets(per10Seconds);
      return this;
    }

    /**
     * For {@link Meridian#start}: the time a new connection has to finish its TLS handshake (if
     * any) and send the HTTP/2 preface and SETTINGS; a slower one is closed. Default 10 s.
     */
    public Builder handshakeTimeout(Duration timeout) {
      this.bounds = bounds.withHandshakeTimeout(Objects.requireNonNull(timeout));
      return this;
    }

    /**
     * For {@link Meridian#start}: the most connections open at once, counted from accept; one
     * more is closed at once. Default 0: the process's open-files limit less a tenth of it (at
     * least 256), kept for config, etcd and the HTTP ports.
     */
    public Builder maxConnections(int max) {
      this.bounds = bounds.withMaxConnections(max, bounds.maxConnectionsPerPeer());
      return this;
    }

    /**
     * For {@link Meridian#start}: the most connections of one peer, its IP address (under mTLS,
     * its client identity); one more is closed. Default 0: half the connections, at least
     * 10.
     */
    public Builder maxConnectionsPerPeer(int max) {
      this.bounds = bounds.withMaxConnections(bounds.maxConnections(), max);
      return this;
    }

    /**
     * The most xDS streams of one peer, its IP address (under mTLS, its client identity), across
     * every server {@link Meridian#xdsServices()} are added to; one more is refused
     * RESOURCE_EXHAUSTED. Default 0: half of {@link #maxStreams}, at least 10.
     */
    public Builder maxStreamsPerPeer(int max) {
      this.bounds = bounds.withMaxStreamsPerPeer(max);
      return this;
    }

    /**
     * For {@link Meridian#start}: the time from the first byte of a request message to its last;
     * a slower message closes its connection. Default 10 s.
     */
    public Builder messageReceiveTimeout(Duration timeout) {
      this.bounds = bounds.withPartialMessages(Objects.requireNonNull(timeout),
          bounds.maxPartialBytes(), bounds.maxPartialBytesPerConnection());
      return this;
    }

    /**
     * For {@link Meridian#start}: the bytes of request messages received in part, across the
     * server; the stream that would go beyond fails RESOURCE_EXHAUSTED. Default 0: a quarter of
     * the JVM's maximum heap.
     */
    public Builder maxPartialBytes(long bytes) {
      this.bounds = bounds.withPartialMessages(bounds.messageReceiveTimeout(), bytes,
          bounds.maxPartialBytesPerConnection());
      return this;
    }

    /**
     * For {@link Meridian#start}: as {@link #maxPartialBytes}, per connection. Default 0: twice
     * {@link #maxRequestBytes}.
     */
    public Builder maxPartialBytesPerConnection(long bytes) {
      this.bounds = bounds.withPartialMessages(bounds.messageReceiveTimeout(),
          bounds.maxPartialBytes(), bytes);
      return this;
    }

    /**
     * For {@link Admin#startHttp}: its threads, the requests that may wait for one (beyond, the
     * new connection is closed), and how long a request may take to arrive (a response then has
     * six times that to be written; a slower connection is closed). Defaults 64, 256, 10 s.
     */
    public Builder adminHttp(int threads, int queue, Duration requestTimeout) {
      this.bounds = bounds.withHttp(threads, queue, Objects.requireNonNull(requestTimeout));
      return this;
    }

    /**
     * For {@link Admin#startHttp}: a host name or address (without port) the port answers to,
     * besides {@code localhost}, loopback addresses and the address it is bound to (when bound to
     * a wildcard address, every address of the machine); {@code *}: any host. A request naming
     * another host in its {@code Host} header is refused {@code 421}: a web page that re-resolves
     * its own name to this machine (DNS rebinding) cannot read the admin data
     * (docs/security.md). Call once per host. Default: none.
     *
     * @throws IllegalArgumentException when {@code host} is neither a host name nor an address
     */
    public Builder adminAllowedHost(String host) {
      adminAllowedHosts.add(MeridianServer.Options.checkAdminAllowedHost(
          Objects.requireNonNull(host, "host")));
      return this;
    }

    /**
     * Registers Meridian's {@code meridian_*} metrics (docs/operations.md) into the application's
     * Prometheus registry as well, so the application's own scrape endpoint shows them; they are
     * unregistered when this Meridian closes. JVM and process metrics are not: those are the
     * application's to register. {@link Admin#metricsText()} and the admin {@code /metrics} show
     * Meridian's metrics either way. One registry takes one Meridian: {@link #build()} fails with
     * {@link IllegalArgumentException} naming the metric when a {@code meridian_*} name is already
     * registered there (another Meridian, or the application's own). Default: none, Meridian's
     * registry is its own.
     */
    public Builder metricsRegistry(PrometheusRegistry registry) {
      this.metricsRegistry = Objects.requireNonNull(registry, "registry");
      return this;
    }

    /**
     * What every response names as {@code control_plane.identifier} (CSDS and client logs show
     * who served a config); default {@code meridian@<host name>}.
     */
    public Builder controlPlaneId(String id) {
      this.controlPlaneId = id;
      return this;
    }

    /**
     * Serves the resources named {@code xdstp://AUTHORITY/...} of this authority (xDS federation,
     * gRFC A47; {@code serve --authority}); call once per authority. A request for the xdstp name
     * of an authority not given is answered as does-not-exist. Default (none given): every
     * authority in the published config.
     */
    public Builder authority(String authority) {
      this.authorities.add(Objects.requireNonNull(authority, "authority"));
      return this;
    }

    /** How nodes are placed in groups; default: every node in the group {@code default}. */
    public Builder grouping(NodeGrouping grouping) {
      this.grouping = Objects.requireNonNull(grouping, "grouping");
      return this;
    }

    /** What a publication is checked for; default {@link Validation#OFF}. */
    public Builder validation(Validation validation) {
      this.validation = Objects.requireNonNull(validation, "validation");
      return this;
    }

    /**
     * The rules every published resource is checked against; default {@link RuleSet#ENVOY}: a
     * publication that breaks one of Envoy's rules is refused, whatever {@link
     * #validation(Validation)} says. Only new and changed resources are checked.
     */
    public Builder validation(RuleSet rules) {
      this.rules = Objects.requireNonNull(rules, "rules");
      return this;
    }

    /** Observes streams; see {@link DiscoveryCallbacks}. The queue holds 65,536 events. */
    public Builder callbacks(DiscoveryCallbacks callbacks) {
      return callbacks(callbacks, 65_536);
    }

    /** Observes streams, with at most {@code queueCapacity} events waiting for the callbacks. */
    public Builder callbacks(DiscoveryCallbacks callbacks, int queueCapacity) {
      if (queueCapacity < 1) {
        throw new IllegalArgumentException("the callback queue needs room for an event");
      }
      this.callbacks = Objects.requireNonNull(callbacks, "callbacks");
      this.callbackQueue = queueCapacity;
      return this;
    }

    /** How often resources with a TTL are heartbeated; default a third of each TTL. */
    public Builder heartbeatInterval(Duration interval) {
      this.heartbeatInterval = interval;
      return this;
    }

    /**
     * Whether streams without a verified client certificate receive Secrets (local development
     * only); default false: a Secret goes only to a stream whose identity is proven, in the group
     * it is published in.
     */
    public Builder allowPlaintextSecrets(boolean allow) {
      this.allowPlaintextSecrets = allow;
      return this;
    }

    /**
     * For {@link Meridian#start}: the most frequent client keepalive ping accepted, how often
     * idle connections are pinged and how long a ping may go unanswered.
     */
    public Builder keepAlive(Duration permitTime, Duration time, Duration timeout) {
      this.permitKeepAliveTime = Objects.requireNonNull(permitTime);
      this.keepAliveTime = Objects.requireNonNull(time);
      this.keepAliveTimeout = Objects.requireNonNull(timeout);
      return this;
    }

    /**
     * For {@link Meridian#start}: connections get a GOAWAY after {@code age} (plus up to 10%
     * jitter) so clients rebalance across replicas; streams then have {@code grace} to end.
     */
    public Builder maxConnectionAge(Duration age, Duration grace) {
      this.maxConnectionAge = age;
      this.maxConnectionAgeGrace = Objects.requireNonNull(grace);
      return this;
    }

    /** How long {@link Meridian#close} lets streams end before cutting them; default 10 s. */
    public Builder shutdownTimeout(Duration timeout) {
      this.shutdownTimeout = Objects.requireNonNull(timeout);
      return this;
    }

    /**
     * For {@link Meridian#start}: TLS from PEM files (re-read when they change), with
     * {@code clientCa} (null: none) mutual TLS, which gives streams their identity. With mTLS,
     * key material goes only in Secrets (sent by identity): a publication that inlines it in
     * another resource (a Cluster's UpstreamTlsContext private_key, ...) is refused with {@link
     * InvalidConfigException}, whatever {@link #validation}, as {@code serve --tls-client-ca} does.
     */
    public Builder tls(Path certChain, Path privateKey, Path clientCa) {
      this.tls = new EmbeddedServer.TlsFiles(certChain, privateKey, clientCa);
      return this;
    }

    /**
     * Under mTLS on {@link Meridian#start}'s server, the identities (a glob) that may call CSDS. A
     * glob with {@code ://} matches URI identities (SPIFFE IDs), any other DNS host names.
     *
     * @throws IllegalArgumentException if the glob can match no identity
     */
    public Builder csdsIdentity(String glob) {
      String problem = glob == null ? null
          : dev.meridian.internal.protocol.Identity.globProblem(glob);
      if (problem != null) {
        throw new IllegalArgumentException(problem);
      }
      this.csdsIdentity = glob;
      return this;
    }

    /**
     * Whether key material may be published only in Secrets (sent by identity): a publication
     * that inlines it in another resource (a Cluster's UpstreamTlsContext private_key, a
     * Listener's session ticket keys, ...) is refused with {@link InvalidConfigException},
     * whatever {@link #validation}. Default: on when {@link #tls} has a client CA (mTLS, as {@code
     * serve --tls-client-ca}), else off; turn it on when {@link Meridian#xdsServices()} run on the
     * application's own mTLS server, which Meridian cannot see.
     */
    public Builder keysOnlyInSecrets(boolean on) {
      this.keysOnlyInSecrets = on;
      return this;
    }

    public Meridian build() {
      return new Meridian(this);
    }
  }
}
