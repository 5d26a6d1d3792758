package dev.meridian.client;

import dev.meridian.internal.protocol.XdstpName;
import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.XdsResource;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.DoubleSupplier;
import java.util.function.Function;

/**
 * An xDS client: watches resources over ADS or per-type streams, State of the World or Delta, with
 * one watcher API; the bootstrap's top-level servers serve plain names, authorities serve their
 * {@code xdstp://} names (gRFC A47). Of each list of servers the first is used, and the next ones
 * when it is unreachable ({@link Fallback}, gRFC A71); the cache is the list's, whichever server
 * filled it. All state lives on one {@link SerializingContext}; watchers are called serialized on
 * the callback executor. The model is grpc-java's XdsClientImpl.
 */
public final class XdsClient implements AutoCloseable {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger("dev.meridian.client");

  /** Which flavour of the protocol (spec "Variants of the xDS Transport Protocol"). */
  public enum Protocol { SOTW, DELTA }

  /** One aggregated stream for all types, or one stream per type. */
  public enum Mode { ADS, PER_TYPE }

  /**
   * When the client leaves a server for the next of its authority's {@code xds_servers} (gRFC
   * A71). Either way it leaves only a server it cannot reach (the stream failed before any
   * response), goes back to a server of higher priority as soon as that one answers again, and
   * keeps its cache across the switch.
   */
  public enum Fallback {
    /**
     * Whenever the server in use is unreachable, cached resources or not: the servers are replicas
     * serving the same config (several Meridians), so another one is as good and keeps the
     * updates coming. gRFC A95's {@code fallback_on_reachability_only}. The default.
     */
    WHEN_UNREACHABLE,
    /**
     * gRFC A71 as written: only when the server in use is unreachable and a watched resource is
     * not cached yet (a resource known not to exist counts as cached), for servers that serve
     * different configs, where the cache of the primary is worth more than the fallback's config.
     */
    WHEN_UNCACHED
  }

  /**
   * The largest response the client accepts by default: 256 MiB. gRPC's own default, 4 MiB, is
   * too small for a fleet (50,000 endpoints in one response are some 5 MiB), and Envoy accepts
   * far more from its xDS server.
   */
  public static final int DEFAULT_MAX_RESPONSE_BYTES = 256 << 20;

  /**
   * @param doesNotExistTimeout spec "Knowing When a Requested Resource Does Not Exist": 15 s in gRPC
   * @param callbackExecutor where watchers run (serialized); null: a daemon thread of our own
   * @param scheduler the clock and timers; null: the system clock
   * @param random jitter source for the reconnect backoff
   * @param fallback when to move to the next of several {@code xds_servers}; null: the default
   * @param maxResponseBytes the largest response message accepted (gRPC transports); a larger one
   *     fails its stream with an {@link XdsError.Kind#RESPONSE_TOO_LARGE} error
   */
  public record Options(Protocol protocol, Mode mode, Duration doesNotExistTimeout,
      Executor callbackExecutor, Scheduler scheduler, DoubleSupplier random, Fallback fallback,
      int maxResponseBytes) {
    public Options {
      Objects.requireNonNull(protocol);
      Objects.requireNonNull(mode);
      Objects.requireNonNull(doesNotExistTimeout);
      if (random == null) {
        random = () -> ThreadLocalRandom.current().nextDouble();
      }
      if (fallback == null) {
        fallback = Fallback.WHEN_UNREACHABLE;
      }
      if (maxResponseBytes <= 0) {
        throw new IllegalArgumentException("maxResponseBytes must be positive: " + maxResponseBytes);
      }
    }

    public Options(Protocol protocol, Mode mode, Duration doesNotExistTimeout,
        Executor callbackExecutor, Scheduler scheduler, DoubleSupplier random, Fallback fallback) {
      this(protocol, mode, doesNotExistTimeout, callbackExecutor, scheduler, random, fallback,
          DEFAULT_MAX_RESPONSE_BYTES);
    }

    public Options(Protocol protocol, Mode mode, Duration doesNotExistTimeout,
        Executor callbackExecutor, Scheduler scheduler, DoubleSupplier random) {
      this(protocol, mode, doesNotExistTimeout, callbackExecutor, scheduler, random, null);
    }

    public static Options defaults() {
      return new Options(Protocol.SOTW, Mode.ADS, Duration.ofSeconds(15), null, null, null, null);
    }

    public Options withProtocol(Protocol p) {
      return new Options(p, mode, doesNotExistTimeout, callbackExecutor, scheduler, random,
          fallback, maxResponseBytes);
    }

    public Options withMode(Mode m) {
      return new Options(protocol, m, doesNotExistTimeout, callbackExecutor, scheduler, random,
          fallback, maxResponseBytes);
    }

    public Options withDoesNotExistTimeout(Duration d) {
      return new Options(protocol, mode, d, callbackExecutor, scheduler, random, fallback,
          maxResponseBytes);
    }

    public Options withCallbackExecutor(Executor e) {
      return new Options(protocol, mode, doesNotExistTimeout, e, scheduler, random, fallback,
          maxResponseBytes);
    }

    public Options withScheduler(Scheduler s) {
      return new Options(protocol, mode, doesNotExistTimeout, callbackExecutor, s, random,
          fallback, maxResponseBytes);
    }

    public Options withRandom(DoubleSupplier r) {
      return new Options(protocol, mode, doesNotExistTimeout, callbackExecutor, scheduler, r,
          fallback, maxResponseBytes);
    }

    public Options withFallback(Fallback f) {
      return new Options(protocol, mode, doesNotExistTimeout, callbackExecutor, scheduler, random,
          f, maxResponseBytes);
    }

    /**
     * The largest response message the client reads (default {@link
     * #DEFAULT_MAX_RESPONSE_BYTES}); a larger one ends its stream, and watchers hear {@link
     * XdsError.Kind#RESPONSE_TOO_LARGE} naming both sizes.
     */
    public Options withMaxResponseBytes(int bytes) {
      return new Options(protocol, mode, doesNotExistTimeout, callbackExecutor, scheduler, random,
          fallback, bytes);
    }
  }

  final SerializingContext ctx = new SerializingContext();
  final Bootstrap bootstrap;
  final Options options;
  private final BiFunction<Bootstrap.ServerInfo, Scheduler, XdsTransport> transportFactory;
  private final Map<Bootstrap.ServerInfo, XdsTransport> transports = new LinkedHashMap<>();
  final Scheduler scheduler;
  private final CallbackExecutor callbacks;
  private final List<AutoCloseable> owned = new ArrayList<>();
  private final Map<ResourceType, TypeState> types = new EnumMap<>(ResourceType.class);
  /**
   * Each authority's servers in priority order (gRFC A71), by their list: authorities that list
   * the same servers share streams and cache. Written only on the context.
   */
  private final Map<List<Bootstrap.ServerInfo>, ServerGroup> groups =
      new java.util.concurrent.ConcurrentHashMap<>();
  /** The top-level {@code xds_servers}: plain names and wildcards (gRFC A47). */
  private final ServerGroup topLevel;
  private boolean shutdown;
  /** Set by close() at once (shutdown is set later, on the context): no more callbacks. */
  private volatile boolean closing;

  /**
   * Connects with gRPC: to the bootstrap's first server, and for {@code xdstp://} names to their
   * authority's first server; to the next ones when those are unreachable (gRFC A71).
   */
  public static XdsClient create(Bootstrap bootstrap, Options options) {
    // TLS files are re-read on the client's own scheduler (gRFC A65 refresh_interval).
    return new XdsClient(bootstrap, options,
        (server, scheduler) -> new GrpcXdsTransport(server, scheduler,
            options.maxResponseBytes()));
  }

  /** With one transport for every server (tests script one). */
  public XdsClient(Bootstrap bootstrap, Options options, XdsTransport transport) {
    this(bootstrap, options, server -> transport);
  }

  /** With a transport per server, opened when the first resource of that server is watched. */
  public XdsClient(Bootstrap bootstrap, Options options,
      Function<Bootstrap.ServerInfo, XdsTransport> transportFactory) {
    this(bootstrap, options, (server, scheduler) -> transportFactory.apply(server));
  }

  /** With a transport per server, made with the client's scheduler. */
  private XdsClient(Bootstrap bootstrap, Options options,
      BiFunction<Bootstrap.ServerInfo, Scheduler, XdsTransport> transportFactory) {
    this.bootstrap = bootstrap;
    this.options = options;
    this.transportFactory = transportFactory;
    this.topLevel = new ServerGroup("xds_servers", bootstrap.servers());
    groups.put(bootstrap.servers(), topLevel);
    this.streamSide = new StreamSide(topLevel, 0);
    if (options.scheduler() != null) {
      this.scheduler = options.scheduler();
    } else {
      SystemScheduler s = new SystemScheduler();
      owned.add(s);
      this.scheduler = s;
    }
    Executor user = options.callbackExecutor();
    if (user == null) {
      ExecutorService e = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "meridian-xds-callbacks");
        t.setDaemon(true);
        return t;
      });
      owned.add(e::shutdown);
      user = e;
    }
    this.callbacks = new CallbackExecutor(user);
  }

  // ---------------------------------------------------------------------------------------------
  // Public API

  /**
   * Watches one resource by name. A cached value (or known absence, or an error the server
   * reported for it) is delivered at once.
   *
   * <p>A glob collection name, {@code xdstp://AUTHORITY/TYPE/PATH/*} (xDS TP1 "Glob"), watches
   * the collection: every member (a resource directly under PATH with the same context
   * parameters) is delivered by its full name, with {@code onChanged} when it is added or changes
   * and {@code onDoesNotExist} when it is removed, as for a wildcard watch. Only Delta serves
   * collections (TP1): over State of the World this throws IllegalArgumentException.
   */
  public Watch watch(ResourceType type, String name, ResourceWatcher watcher) {
    Objects.requireNonNull(name, "name");
    checkServable(type, name);
    if (XdstpName.isXdstp(name)) {
      name = XdstpName.parse(name).canonical(); // gRFC A47: context parameters in sorted order
    }
    WatchImpl w = new WatchImpl(type, name, watcher);
    ctx.execute(() -> addWatch(w));
    return w;
  }

  /**
   * Watches several resources at once: they go out in one request, so that (SotW LDS/CDS) the
   * first response settles the absent ones without waiting for the does-not-exist timer.
   * Cancelling the returned watch cancels them all.
   */
  public Watch watch(ResourceType type, java.util.Collection<String> names,
      ResourceWatcher watcher) {
    checkServable(type);
    names.forEach(n -> checkServable(type, n));
    List<WatchImpl> ws = new ArrayList<>();
    for (String n : new LinkedHashSet<>(names)) {
      ws.add(new WatchImpl(type, XdstpName.isXdstp(n) ? XdstpName.parse(n).canonical() : n,
          watcher));
    }
    ctx.execute(() -> addNamedWatches(ws));
    return () -> ws.forEach(WatchImpl::cancel);
  }

  /** Watches every resource of a type (a wildcard subscription). */
  public Watch watchAll(ResourceType type, ResourceWatcher watcher) {
    checkServable(type);
    WatchImpl w = new WatchImpl(type, null, watcher);
    ctx.execute(() -> addWatch(w));
    return w;
  }

  /** Spec "RPC Services and Methods": VHDS exists only as an incremental service. */
  private void checkServable(ResourceType type) {
    if (options.protocol() == Protocol.SOTW && !type.availableInSotw()) {
      throw new IllegalArgumentException(type.shortName() + " (" + type.abbreviation()
          + ") is only served by incremental (Delta) xDS");
    }
  }

  /**
   * xDS TP1 "Glob": "SotW is not supported with the new collections" (nor could SotW tell a
   * client that a member was removed); Meridian's server ends such a stream with INVALID_ARGUMENT.
   */
  private void checkServable(ResourceType type, String name) {
    checkServable(type);
    if (options.protocol() == Protocol.SOTW && XdstpName.isGlob(name)) {
      throw new IllegalArgumentException("glob collection " + name + ": collections (xDS TP1) are"
          + " only served by incremental (Delta) xDS, not State of the World");
    }
  }

  public Bootstrap bootstrap() {
    return bootstrap;
  }

  /**
   * The top-level server the client uses now (any thread): the first of {@code xds_servers}, or
   * the one it fell back to while the first is unreachable (gRFC A71). Switches are logged.
   */
  public Bootstrap.ServerInfo serverInUse() {
    return topLevel.inUse();
  }

  /**
   * The server the client uses now for an authority's {@code xdstp://} names (gRFC A47, A71); its
   * first server until one of its resources is watched. Empty when the bootstrap does not name the
   * authority.
   */
  public java.util.Optional<Bootstrap.ServerInfo> serverInUse(String authority) {
    Bootstrap.Authority a = bootstrap.authorities().get(authority);
    if (a == null) {
      return java.util.Optional.empty();
    }
    List<Bootstrap.ServerInfo> list = a.servers().isEmpty() ? bootstrap.servers() : a.servers();
    ServerGroup g = groups.get(list);
    return java.util.Optional.of(g == null ? list.get(0) : g.inUse());
  }

  @Override
  public void close() {
    closing = true;
    ctx.execute(() -> {
      if (shutdown) {
        return;
      }
      shutdown = true;
      for (ServerGroup g : groups.values()) {
        for (ClientStream<?> s : g.streams.values()) {
          s.shutdown();
        }
        g.streams.clear();
      }
      for (TypeState ts : types.values()) {
        for (Entry e : ts.entries.values()) {
          e.cancelTimers();
        }
      }
    });
    List<XdsTransport> toClose;
    synchronized (transports) {
      toClose = new ArrayList<>(new java.util.LinkedHashSet<>(transports.values()));
    }
    toClose.forEach(XdsTransport::close);
    for (AutoCloseable c : owned) {
      try {
        c.close();
      } catch (Exception e) {
        LOG.debug("closing", e);
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // State (touched only on ctx)

  private XdsTransport transportFor(Bootstrap.ServerInfo server) {
    synchronized (transports) {
      return transports.computeIfAbsent(server, s -> {
        XdsTransport t = transportFactory.apply(s, scheduler);
        t.whenConnected(() -> ctx.execute(() -> connected(s)));
        return t;
      });
    }
  }

  /**
   * The connection to {@code server} is ready again: its streams that wait out a backoff reconnect
   * now, so that the client goes back to a server of higher priority (gRFC A71) as soon as it is
   * back, not after a backoff that grew while it was down.
   */
  private void connected(Bootstrap.ServerInfo server) {
    ctx.throwIfNotInThisContext();
    if (shutdown) {
      return;
    }
    for (ServerGroup g : groups.values()) {
      for (Map.Entry<ServerGroup.StreamKey, ClientStream<?>> s : new ArrayList<>(
          g.streams.entrySet())) {
        if (g.servers.get(s.getKey().server()).equals(server)) {
          s.getValue().reconnectNow();
        }
      }
    }
  }

  /** One resource the client is interested in or (for wildcard) knows about. */
  private static final class Entry {
    final String name;
    /** The servers it is subscribed on; null: its authority is not in the bootstrap. */
    final ServerGroup server;
    /** A glob collection (xDS TP1): subscribed to, never a resource itself; its watchers get its members. */
    final boolean glob;
    /** The glob collection this resource would be a member of (TP1), or null. */
    final String collection;
    final List<WatchImpl> watchers = new ArrayList<>();
    ResourceUpdate data;
    boolean absent;
    /**
     * What the server last reported for it in {@code resource_errors} other than NOT_FOUND (gRFC
     * A88: the error is recorded, the cached resource kept); cleared when the resource comes.
     */
    XdsError serverError;
    Scheduler.Cancellable dneTimer;
    Scheduler.Cancellable ttlTimer;

    Entry(String name, ServerGroup server) {
      this.name = name;
      this.server = server;
      this.glob = XdstpName.isGlob(name);
      this.collection = XdstpName.collectionOf(name);
    }

    void cancelTimers() {
      if (dneTimer != null) {
        dneTimer.cancel();
        dneTimer = null;
      }
      if (ttlTimer != null) {
        ttlTimer.cancel();
        ttlTimer = null;
      }
    }
  }

  /**
   * Per type: subscriptions, cache and the accepted version per list of servers (whichever of its
   * servers sent it: it is carried to the next one, gRFC A71).
   */
  private static final class TypeState {
    final ResourceType type;
    final ServerGroup primary;
    final Map<String, Entry> entries = new LinkedHashMap<>();
    /** Wildcard watches are served by the top-level server (gRFC A47). */
    final List<WatchImpl> wildcardWatchers = new ArrayList<>();
    final Map<ServerGroup, String> acceptedVersions = new HashMap<>();
    boolean responded;

    TypeState(ResourceType type, ServerGroup primary) {
      this.type = type;
      this.primary = primary;
    }

    boolean wildcard() {
      return !wildcardWatchers.isEmpty();
    }

    boolean wildcardOn(ServerGroup server) {
      return wildcard() && primary.equals(server);
    }

    /**
     * The watched glob collection (TP1) that a resource named {@code name} from {@code server}
     * is a member of, or null.
     */
    Entry collectionFor(String name, ServerGroup server) {
      String c = XdstpName.collectionOf(name);
      return c == null ? null : watchedCollection(c, server);
    }

    Entry collectionFor(Entry member) {
      return member.collection == null ? null : watchedCollection(member.collection, member.server);
    }

    private Entry watchedCollection(String collection, ServerGroup server) {
      Entry g = entries.get(collection);
      return g != null && !g.watchers.isEmpty() && g.server != null && g.server.equals(server)
          ? g : null;
    }

    String acceptedVersion(ServerGroup server) {
      return acceptedVersions.getOrDefault(server, "");
    }

    ResourceStore.Interest interest(ServerGroup server) {
      Set<String> names = new LinkedHashSet<>();
      for (Entry e : entries.values()) {
        if (!e.watchers.isEmpty() && server.equals(e.server)) {
          names.add(e.name);
        }
      }
      return new ResourceStore.Interest(wildcardOn(server), names);
    }

    /** What a reconnecting stream tells the server it holds (Delta initial_resource_versions). */
    Map<String, String> heldVersions(ServerGroup server) {
      Map<String, String> held = new LinkedHashMap<>();
      for (Entry e : entries.values()) {
        if (e.data != null && server.equals(e.server)
            && (wildcardOn(server) || !e.watchers.isEmpty() || collectionFor(e) != null)) {
          held.put(e.name, e.data.serverVersion());
        }
      }
      return held;
    }
  }

  private final class WatchImpl implements Watch {
    final ResourceType type;
    final String name; // null: wildcard
    final ResourceWatcher watcher;
    volatile boolean cancelled;

    WatchImpl(ResourceType type, String name, ResourceWatcher watcher) {
      this.type = type;
      this.name = name;
      this.watcher = watcher;
    }

    @Override
    public void cancel() {
      cancelled = true;
      ctx.execute(() -> removeWatch(this));
    }
  }

  private TypeState state(ResourceType type) {
    ctx.throwIfNotInThisContext();
    return types.computeIfAbsent(type, t -> new TypeState(t, topLevel));
  }

  /** Types with at least one subscription, in make-before-break order (CDS, EDS, LDS, RDS...). */
  private List<ResourceType> subscribedTypes(ServerGroup server, StreamScope scope) {
    ctx.throwIfNotInThisContext();
    List<ResourceType> out = new ArrayList<>();
    for (ResourceType t : ResourceType.values()) {
      TypeState ts = types.get(t);
      if (scope.carries(t) && ts != null && ts.interest(server).any()) {
        out.add(t);
      }
    }
    return out;
  }

  private StreamScope scopeOf(ResourceType type) {
    return switch (options.mode()) {
      case ADS -> StreamScope.ADS;
      case PER_TYPE -> StreamScope.of(type);
    };
  }

  /** The group serving the server list {@code servers} (gRFC A47 authority, A71 fallbacks). */
  private ServerGroup groupFor(List<Bootstrap.ServerInfo> servers) {
    ctx.throwIfNotInThisContext();
    return groups.computeIfAbsent(servers, list -> new ServerGroup(
        bootstrap.authorities().entrySet().stream()
            .filter(a -> a.getValue().servers().equals(list)).findFirst()
            .map(a -> "authorities." + a.getKey() + ".xds_servers").orElse("xds_servers"), list));
  }

  /** The stream of the group's server in use that carries {@code type}; opened if need be. */
  private ClientStream<?> streamFor(ServerGroup group, ResourceType type) {
    return streamFor(group, group.active(), scopeOf(type));
  }

  private ClientStream<?> streamFor(ServerGroup group, int index, StreamScope scope) {
    ctx.throwIfNotInThisContext();
    ServerGroup.StreamKey key = new ServerGroup.StreamKey(index, scope);
    ClientStream<?> s = group.streams.get(key);
    if (s == null) {
      Bootstrap.ServerInfo server = group.servers.get(index);
      StreamSide side = new StreamSide(group, index);
      ClientStream.Deps deps = new ClientStream.Deps(transportFor(server), bootstrap.node(),
          side, side, ctx, scheduler, options.random());
      s = switch (options.protocol()) {
        case SOTW -> new SotwClientStream(server, scope, deps);
        case DELTA -> new DeltaClientStream(server, scope, deps);
      };
      group.streams.put(key, s);
      s.start();
    }
    return s;
  }

  /**
   * Tells every stream of the group that carries {@code type} that its subscription changed: the
   * one in use, and those of higher priority that are reconnecting (gRFC A71: they are
   * subscribed to everything watched, so that the client can go back to them).
   */
  private void subscriptionChanged(ServerGroup group, ResourceType type) {
    ctx.throwIfNotInThisContext();
    streamFor(group, type); // the server in use must have one
    for (ClientStream<?> s : group.streamsOf(scopeOf(type))) {
      s.subscriptionChanged(type);
    }
  }

  /**
   * gRFC A71 "Change XdsClient to support fallback within each xDS authority": the condition to
   * fall back, besides the server in use being unreachable. {@link Fallback#WHEN_UNCACHED}: a
   * watched resource of the group is not cached yet (does-not-exist counts as cached; a wildcard
   * before its first response counts as not cached).
   */
  private boolean wantsFallback(ServerGroup group) {
    ctx.throwIfNotInThisContext();
    if (options.fallback() == Fallback.WHEN_UNREACHABLE) {
      return true;
    }
    for (TypeState ts : types.values()) {
      if (ts.wildcardOn(group) && !ts.responded) {
        return true;
      }
      for (Entry e : ts.entries.values()) {
        if (group.equals(e.server) && !e.watchers.isEmpty() && e.data == null && !e.absent
            && e.serverError == null && !e.glob) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * Makes server {@code index} the group's server in use. Falling back (to a lower priority), it
   * opens that server's streams, subscribed to everything watched and carrying what the client
   * holds (SotW {@code version_info}, Delta {@code initial_resource_versions}), so that a replica
   * with the same config sends nothing; the streams of higher priority go on reconnecting. Going
   * back (gRFC A71: a server of higher priority answered), it closes the streams of lower
   * priority. The cache is kept either way: a resource is reported to watchers only if it differs.
   */
  private void switchTo(ServerGroup group, int index, String why) {
    ctx.throwIfNotInThisContext();
    int from = group.active();
    if (index == from) {
      return;
    }
    LOG.atLevel(index > from ? org.slf4j.event.Level.WARN : org.slf4j.event.Level.INFO).log(
        "xDS server {}[{}] {} in use instead of {}[{}] {} ({}): {}", group, index,
        group.servers.get(index).serverUri(), group, from, group.servers.get(from).serverUri(),
        index > from ? "fallback" : "back to a server of higher priority", why);
    // The does-not-exist timers run for a server in use; they start again when the new one is
    // ready.
    for (TypeState ts : types.values()) {
      for (Entry e : ts.entries.values()) {
        if (group.equals(e.server) && e.dneTimer != null) {
          e.dneTimer.cancel();
          e.dneTimer = null;
        }
      }
    }
    group.use(index);
    if (index < from) {
      group.streams.entrySet().removeIf(s -> {
        if (s.getKey().server() > index) {
          s.getValue().shutdown();
          return true;
        }
        return false;
      });
      // gRFC A71 closes the connections to the lower-priority servers; we close their streams
      // and leave the channel, which then has no call and goes idle (gRPC's idle timeout), since a
      // transport from a factory is not ours to close before the client is.
    }
    Set<StreamScope> scopes = new LinkedHashSet<>();
    for (ResourceType t : ResourceType.values()) {
      TypeState ts = types.get(t);
      if (ts != null && ts.interest(group).any()) {
        scopes.add(scopeOf(t));
      }
    }
    for (StreamScope scope : scopes) {
      ClientStream<?> s = streamFor(group, index, scope);
      if (index < from) {
        s.reconnectNow(); // the server answered on another of its streams: no need to wait
      }
      if (s.ready) {
        streamReady(group, scope);
      }
    }
  }

  private void addWatch(WatchImpl w) {
    ctx.throwIfNotInThisContext();
    if (shutdown || w.cancelled) {
      return;
    }
    TypeState ts = state(w.type);
    if (w.name == null) {
      boolean first = !ts.wildcard();
      ts.wildcardWatchers.add(w);
      for (Entry e : ts.entries.values()) {
        if (e.data != null && ts.primary.equals(e.server)) {
          ResourceUpdate u = e.data;
          deliver(w, x -> x.onChanged(u));
        }
      }
      if (ts.responded) {
        String v = ts.acceptedVersion(topLevel);
        deliver(w, x -> x.onResponseProcessed(ts.type, v, false));
      }
      if (first) {
        subscriptionChanged(topLevel, w.type);
      }
      return;
    }
    addNamedWatches(List.of(w));
  }

  /** Registers named watches, then tells each server once. */
  private void addNamedWatches(List<WatchImpl> ws) {
    ctx.throwIfNotInThisContext();
    List<Entry> fresh = new ArrayList<>();
    for (WatchImpl w : ws) {
      if (!shutdown && !w.cancelled) {
        Entry e = register(w);
        if (e != null) {
          fresh.add(e);
        }
      }
    }
    Map<ServerGroup, List<Entry>> byServer = new LinkedHashMap<>();
    for (Entry e : fresh) {
      byServer.computeIfAbsent(e.server, k -> new ArrayList<>()).add(e);
    }
    byServer.forEach((server, entries) -> {
      ResourceType type = ws.get(0).type;
      subscriptionChanged(server, type);
      if (streamFor(server, type).ready) {
        for (Entry e : entries) {
          startDneTimer(state(type), e);
        }
      }
    });
  }

  /** Adds a named watch to its entry; returns the entry if it is newly subscribed. */
  private Entry register(WatchImpl w) {
    ctx.throwIfNotInThisContext();
    TypeState ts = state(w.type);
    Entry e = ts.entries.computeIfAbsent(w.name,
        n -> new Entry(n, bootstrap.serversFor(n).map(this::groupFor).orElse(null)));
    boolean newlyNamed = e.watchers.isEmpty();
    e.watchers.add(w);
    if (e.data != null) {
      ResourceUpdate u = e.data;
      deliver(w, x -> x.onChanged(u));
    } else if (e.absent) {
      deliver(w, x -> x.onDoesNotExist(w.type, w.name));
    }
    if (e.serverError != null) {
      XdsError err = e.serverError;
      deliver(w, x -> x.onError(err));
    }
    if (e.glob && e.server != null) {
      for (Entry m : ts.entries.values()) { // the members the client holds already
        if (e.name.equals(m.collection) && e.server.equals(m.server) && m.data != null) {
          ResourceUpdate u = m.data;
          deliver(w, x -> x.onChanged(u));
        }
      }
    }
    if (e.server == null) {
      // gRFC A47: a name whose authority the bootstrap does not know cannot be subscribed to.
      XdsError err = new XdsError(XdsError.Kind.INVALID_RESOURCE, w.type, w.name,
          "authority " + XdstpName.parse(w.name).authority() + " is not in the bootstrap");
      deliver(w, x -> x.onError(err));
      return null;
    }
    return newlyNamed ? e : null;
  }

  private void removeWatch(WatchImpl w) {
    ctx.throwIfNotInThisContext();
    TypeState ts = types.get(w.type);
    if (ts == null || shutdown) {
      return;
    }
    boolean changed;
    ServerGroup server = topLevel;
    if (w.name == null) {
      changed = ts.wildcardWatchers.remove(w) && !ts.wildcard();
      if (changed) {
        ts.entries.values().removeIf(e -> {
          if (e.watchers.isEmpty()) {
            e.cancelTimers();
            return true;
          }
          return false;
        });
      }
    } else {
      Entry e = ts.entries.get(w.name);
      changed = e != null && e.watchers.remove(w) && e.watchers.isEmpty();
      if (e != null) {
        server = e.server;
      }
      // A member of a watched collection stays: the collection still holds it (TP1 "Glob").
      if (changed && (!ts.wildcard() || e.server == null || !e.server.equals(ts.primary))
          && (e.glob || ts.collectionFor(e) == null)) {
        e.cancelTimers();
        ts.entries.remove(w.name);
      } else if (changed && e.dneTimer != null) {
        e.dneTimer.cancel();
        e.dneTimer = null;
      }
      if (changed && e.glob) {
        // TP1: unsubscribing a collection needs no answer; its members held only through it go.
        ts.entries.values().removeIf(m -> {
          if (w.name.equals(m.collection) && m.watchers.isEmpty() && !ts.wildcardOn(m.server)) {
            m.cancelTimers();
            return true;
          }
          return false;
        });
      }
    }
    if (changed && server != null) {
      for (ClientStream<?> s : server.streamsOf(scopeOf(w.type))) {
        s.subscriptionChanged(w.type);
      }
    }
  }

  /**
   * Spec "Knowing When a Requested Resource Does Not Exist": started once the request is on a
   * ready stream, so that a slow connection is not mistaken for an absent resource.
   */
  private void startDneTimer(TypeState ts, Entry e) {
    ctx.throwIfNotInThisContext();
    if (e.data != null || e.absent || e.dneTimer != null || e.watchers.isEmpty()
        || e.serverError != null || e.glob) {
      // A collection is no resource: an empty one is not answered at all (TP1), so no timer.
      return;
    }
    e.dneTimer = scheduler.schedule(() -> ctx.execute(() -> {
      if (ts.entries.get(e.name) != e || e.dneTimer == null) {
        return;
      }
      e.dneTimer = null;
      if (e.data == null && !e.absent) {
        e.absent = true;
        notifyAll(ts, e, x -> x.onDoesNotExist(ts.type, e.name));
      }
    }), options.doesNotExistTimeout());
  }

  // ---------------------------------------------------------------------------------------------
  // What the streams see of the client: only these two narrow interfaces.

  /** The side of the top-level primary's streams (tests call it directly). */
  final StreamSide streamSide;

  /**
   * The client as the streams to one server of a group see it; every method asserts the context.
   * The stream's own server argument is that server: the side knows its group and place in it.
   */
  final class StreamSide implements ResourceStore, ResponseHandler {
    private final ServerGroup group;
    private final int index;

    StreamSide(ServerGroup group, int index) {
      this.group = group;
      this.index = index;
    }

    @Override
    public List<ResourceType> subscribedTypes(Bootstrap.ServerInfo server, StreamScope scope) {
      return XdsClient.this.subscribedTypes(group, scope);
    }

    @Override
    public Interest interest(Bootstrap.ServerInfo server, ResourceType type) {
      ctx.throwIfNotInThisContext();
      TypeState ts = types.get(type);
      return ts == null ? Interest.NONE : ts.interest(group);
    }

    /**
     * The version accepted from whichever server of the group sent it: a replica serving the same
     * config (versions from content) then has nothing to send.
     */
    @Override
    public String acceptedVersion(Bootstrap.ServerInfo server, ResourceType type) {
      ctx.throwIfNotInThisContext();
      TypeState ts = types.get(type);
      return ts == null ? "" : ts.acceptedVersion(group);
    }

    @Override
    public Map<String, String> heldVersions(Bootstrap.ServerInfo server, ResourceType type) {
      ctx.throwIfNotInThisContext();
      TypeState ts = types.get(type);
      return ts == null ? Map.of() : ts.heldVersions(group);
    }

    @Override
    public void handleStreamReady(Bootstrap.ServerInfo server, StreamScope scope) {
      streamReady(group, index, scope);
    }

    @Override
    public void handleStreamClosed(Bootstrap.ServerInfo server, StreamScope scope, Status status,
        boolean responded) {
      streamClosed(group, index, scope, status, responded);
    }

    @Override
    public List<String> handleSotwResponse(Bootstrap.ServerInfo server, DecodedResponse response,
        String versionInfo, Set<String> namedInEveryRequest, Runnable processed) {
      try {
        return usable(group, index)
            ? applySotw(group, response, versionInfo, namedInEveryRequest) : List.of();
      } finally {
        afterCallbacks(processed); // even if applying threw: the stream must read on
      }
    }

    @Override
    public List<String> handleDeltaResponse(Bootstrap.ServerInfo server, DecodedResponse response,
        String systemVersionInfo, Runnable processed) {
      try {
        return usable(group, index) ? applyDelta(group, response, systemVersionInfo) : List.of();
      } finally {
        afterCallbacks(processed); // even if applying threw: the stream must read on
      }
    }
  }

  /**
   * Whether a response from server {@code index} of the group is applied. gRFC A71: a server of
   * higher priority than the one in use that sends a response becomes the one in use again; one of
   * lower priority (a stream being closed) is not listened to.
   */
  private boolean usable(ServerGroup group, int index) {
    ctx.throwIfNotInThisContext();
    if (index < group.active()) {
      switchTo(group, index, "it answered again");
    }
    return index == group.active();
  }

  private void streamReady(ServerGroup group, int index, StreamScope scope) {
    ctx.throwIfNotInThisContext();
    if (index < group.active() && options.fallback() == Fallback.WHEN_UNREACHABLE) {
      // Replicas serve the same config: a server of higher priority is as good as soon as it is
      // reachable, and with the versions we hold it may have nothing to send (gRFC A71 waits for a
      // response, which such a server never sends).
      switchTo(group, index, "it is reachable again");
      return;
    }
    if (index == group.active()) {
      streamReady(group, scope);
    }
  }

  private void streamReady(ServerGroup server, StreamScope scope) {
    ctx.throwIfNotInThisContext();
    for (ResourceType t : subscribedTypes(server, scope)) {
      TypeState ts = state(t);
      for (Entry e : ts.entries.values()) {
        if (server.equals(e.server)) {
          startDneTimer(ts, e);
        }
      }
    }
  }

  /**
   * A stream of server {@code index} ended; it reconnects on its own. Only the server in use
   * matters: gRFC A71 falls back when it is unreachable (A57: the stream ended before any
   * response) and the fallback condition holds ({@link #wantsFallback}); watchers hear of the
   * failure only when no server is left to try, or when the client stays on this one.
   */
  private void streamClosed(ServerGroup group, int index, StreamScope scope, Status status,
      boolean responded) {
    ctx.throwIfNotInThisContext();
    Bootstrap.ServerInfo server = group.servers.get(index);
    if (index != group.active()) {
      LOG.debug("xDS {}: {} still unreachable: {}", group,
          server.serverUri(), status);
      return;
    }
    for (ResourceType t : subscribedTypes(group, scope)) {
      TypeState ts = state(t);
      for (Entry e : ts.entries.values()) {
        // The timers restart when the next stream is ready (grpc-java does the same).
        if (group.equals(e.server) && e.dneTimer != null) {
          e.dneTimer.cancel();
          e.dneTimer = null;
        }
      }
    }
    ResponseTooLarge tooLarge = ResponseTooLarge.of(status);
    String failed = tooLarge != null ? tooLarge.describe(server.serverUri())
        : ConnectFailure.describe(status, server.serverUri());
    String why = failed != null ? failed
        : "xDS stream to " + server.serverUri() + " closed: " + status.getCode()
            + (status.getDescription() == null ? "" : " " + status.getDescription());
    if (group.hasFallbackAfter(index)) {
      if (!responded && wantsFallback(group)) {
        switchTo(group, index + 1, why);
        return;
      }
      if (responded) {
        // The stream reconnects at once; if that fails the server is unreachable, and the client
        // falls back without troubling the watchers or tells them then.
        return;
      }
    }
    for (ResourceType t : subscribedTypes(group, scope)) {
      TypeState ts = state(t);
      XdsError err = new XdsError(tooLarge != null ? XdsError.Kind.RESPONSE_TOO_LARGE
          : XdsError.Kind.UNAVAILABLE, t, null, why);
      for (WatchImpl w : distinctWatchers(ts, group)) {
        deliver(w, x -> x.onError(err));
      }
    }
  }

  /**
   * A SotW response: its resources, then (spec "Grouping Resources into Responses") for
   * Listener/Cluster the deletion of what it omits. Returns the problems (empty: ACK).
   */
  private List<String> applySotw(ServerGroup server, DecodedResponse d, String version,
      Set<String> namedInEveryRequest) {
    ctx.throwIfNotInThisContext();
    TypeState ts = state(d.type);
    Set<String> seen = applyResources(ts, server, d, version);
    // In SotW a Listener/Cluster response is the whole state, so a resource it omits is deleted
    // (unless the server asked us not to, gRFC A53).
    // Spec "Knowing When a Requested Resource Does Not Exist" (SotW): a newly requested resource
    // missing from a response proves nothing, the response may answer an earlier request; so
    // while its does-not-exist timer runs, only the timer decides, unless every request on this
    // stream named it (then the response answers a request that asked for it).
    // server_features are each server's own (gRFC A71): those of the server in use apply.
    if (d.type.fullStateInSotw() && !d.unnamedErrors
        && !server.activeServer().ignoreResourceDeletion()) {
      for (Entry e : new ArrayList<>(ts.entries.values())) {
        if (!seen.contains(e.name) && server.equals(e.server) && !keepsCache(d, e.name)
            && (e.dneTimer == null || !e.dneTimer.isPending()
                || namedInEveryRequest.contains(e.name))) {
          remove(ts, e);
        }
      }
    }
    applyResourceErrors(ts, server, d);
    responseProcessed(ts, server, d);
    return d.errors;
  }

  /** A Delta response: its resources, then its removed_resources. Returns the problems. */
  private List<String> applyDelta(ServerGroup server, DecodedResponse d,
      String systemVersion) {
    ctx.throwIfNotInThisContext();
    TypeState ts = state(d.type);
    applyResources(ts, server, d, systemVersion);
    // Spec "Incremental xDS", "Knowing When a Requested Resource Does Not Exist": the server names
    // a subscribed resource that does not exist in removed_resources, no timeout needed.
    for (String name : d.removed) {
      Entry e = ts.entries.get(name);
      if (e != null && server.equals(e.server) && !e.glob && !keepsCache(d, name)) {
        remove(ts, e);
      }
    }
    applyResourceErrors(ts, server, d);
    responseProcessed(ts, server, d);
    return d.errors;
  }

  /**
   * Applies what a response carries, whichever the variant, and returns the names it mentioned.
   * Valid resources are used even when others are rejected; rejected ones keep their last good
   * value.
   */
  private Set<String> applyResources(TypeState ts, ServerGroup server, DecodedResponse d,
      String version) {
    ctx.throwIfNotInThisContext();
    if (d.errors.isEmpty()) {
      ts.acceptedVersions.put(server, version);
    }
    ts.responded = true;
    Set<String> seen = new LinkedHashSet<>();
    for (DecodedResponse.Item it : d.valid.values()) {
      seen.add(it.name());
      Entry e = ts.entries.get(it.name());
      if (e == null) {
        if (!ts.wildcardOn(server) && ts.collectionFor(it.name(), server) == null) {
          continue; // not asked for: ignore (the server may be ahead of our unsubscribe)
        }
        e = new Entry(it.name(), server);
        ts.entries.put(it.name(), e);
      } else if (!server.equals(e.server)) {
        continue; // another server is authoritative for this name
      }
      if (e.dneTimer != null) {
        e.dneTimer.cancel();
        e.dneTimer = null;
      }
      XdsResource r = d.type.hasOwnName() ? XdsResource.of(d.type, it.message(), it.ttl(), List.of())
          : XdsResource.named(d.type, it.name(), it.message(), it.ttl(), List.of()); // LEDS
      boolean changed = e.data == null || !e.data.resource().version().equals(r.version());
      ResourceUpdate u = new ResourceUpdate(r, it.version(), it.ttl());
      e.data = u;
      e.absent = false;
      e.serverError = null;
      scheduleTtl(ts, e);
      if (changed) {
        notifyAll(ts, e, x -> x.onChanged(u));
      }
    }
    for (String name : d.heartbeats) {
      seen.add(name);
      Entry e = ts.entries.get(name);
      if (e != null && e.data != null && server.equals(e.server)) {
        scheduleTtl(ts, e); // spec "TTL": a heartbeat refreshes the TTL, nothing else
      }
    }
    for (Map.Entry<String, String> bad : d.invalid.entrySet()) {
      String name = bad.getKey();
      seen.add(name);
      Entry e = ts.entries.get(name);
      if (e != null && server.equals(e.server)) {
        if (e.dneTimer != null) { // it exists, even if unusable
          e.dneTimer.cancel();
          e.dneTimer = null;
        }
        XdsError err = new XdsError(XdsError.Kind.INVALID_RESOURCE, d.type, name, bad.getValue());
        notifyAll(ts, e, x -> x.onError(err));
      }
    }
    return seen;
  }

  /**
   * Whether the server's {@code resource_errors} entry for {@code name} is an error other than
   * NOT_FOUND: gRFC A88 "Support for Errors Provided by the xDS server": the error is recorded
   * "but still keep the previous version of the resource cached", so the removal that comes with
   * it (Delta {@code removed_resources}, SotW absence) does not drop the cache.
   */
  private static boolean keepsCache(DecodedResponse d, String name) {
    com.google.rpc.Status s = d.resourceErrors.get(name);
    return s != null && s.getCode() != com.google.rpc.Code.NOT_FOUND_VALUE;
  }

  /**
   * xDS TP3 {@code resource_errors}, as gRFC A88 "Support for Errors Provided by the xDS server"
   * reads them: the does-not-exist timer of each name is cancelled and its watchers told now.
   * NOT_FOUND is the resource not existing ({@code onDoesNotExist} at once; a cached resource is
   * dropped, as for a deletion, unless the server has {@code ignore_resource_deletion}, gRFC
   * A53); any other code (PERMISSION_DENIED for a withheld Secret) is an {@code onError} of kind
   * {@link XdsError.Kind#RESOURCE_ERROR}, the cached resource staying in place (A88's default,
   * without {@code fail_on_data_errors}). A glob collection is no resource: any error for it is
   * an error. Names not watched, or another server's, are ignored.
   */
  private void applyResourceErrors(TypeState ts, ServerGroup server, DecodedResponse d) {
    ctx.throwIfNotInThisContext();
    for (Map.Entry<String, com.google.rpc.Status> re : d.resourceErrors.entrySet()) {
      String name = re.getKey();
      com.google.rpc.Status status = re.getValue();
      Entry e = ts.entries.get(name);
      if (e == null || !server.equals(e.server) || d.valid.containsKey(name)
          || d.invalid.containsKey(name)) {
        continue; // not watched, another server's, or sent after all: what was sent decides
      }
      if (e.dneTimer != null) {
        e.dneTimer.cancel();
        e.dneTimer = null;
      }
      boolean notFound = status.getCode() == com.google.rpc.Code.NOT_FOUND_VALUE;
      if (notFound && !e.glob
          && (e.data == null || !server.activeServer().ignoreResourceDeletion())) {
        remove(ts, e); // says nothing if it was known to be absent already (Delta's removal)
        continue;
      }
      com.google.rpc.Code code = com.google.rpc.Code.forNumber(status.getCode());
      XdsError err = new XdsError(XdsError.Kind.RESOURCE_ERROR, ts.type, name,
          (code == null ? "code " + status.getCode() : code.name())
              + (status.getMessage().isEmpty() ? "" : ": " + status.getMessage()));
      if (!e.glob) {
        e.serverError = err;
      }
      notifyAll(ts, e, x -> x.onError(err));
    }
  }

  /** Every watcher of the type hears that a response was processed, and whether it was NACKed. */
  private void responseProcessed(TypeState ts, ServerGroup server, DecodedResponse d) {
    ctx.throwIfNotInThisContext();
    String accepted = ts.acceptedVersion(server);
    boolean nacked = !d.errors.isEmpty();
    for (WatchImpl w : distinctWatchers(ts, server)) {
      deliver(w, x -> x.onResponseProcessed(d.type, accepted, nacked));
    }
  }

  /**
   * One watch per distinct watcher object: type-level events (a processed response, a stream
   * error) reach a watcher once even when it watches several names.
   */
  private List<WatchImpl> distinctWatchers(TypeState ts, ServerGroup server) {
    ctx.throwIfNotInThisContext();
    Map<ResourceWatcher, WatchImpl> byWatcher = new java.util.IdentityHashMap<>();
    List<WatchImpl> out = new ArrayList<>();
    List<WatchImpl> all = new ArrayList<>();
    if (ts.wildcardOn(server)) {
      all.addAll(ts.wildcardWatchers);
    }
    ts.entries.values().stream().filter(e -> server.equals(e.server))
        .forEach(e -> all.addAll(e.watchers));
    for (WatchImpl w : all) {
      if (byWatcher.putIfAbsent(w.watcher, w) == null) {
        out.add(w);
      }
    }
    return out;
  }

  /** The resource is gone: deleted, removed or expired. */
  private void remove(TypeState ts, Entry e) {
    ctx.throwIfNotInThisContext();
    e.cancelTimers();
    boolean wasKnown = e.data != null || !e.absent;
    e.data = null;
    e.absent = true;
    e.serverError = null;
    if (wasKnown) {
      notifyAll(ts, e, x -> x.onDoesNotExist(ts.type, e.name));
    }
    if (e.watchers.isEmpty()) {
      e.cancelTimers();
      ts.entries.remove(e.name);
    }
  }

  /** Spec "TTL": without an update or heartbeat within the TTL, the resource is removed. */
  private void scheduleTtl(TypeState ts, Entry e) {
    ctx.throwIfNotInThisContext();
    if (e.ttlTimer != null) {
      e.ttlTimer.cancel();
      e.ttlTimer = null;
    }
    com.google.protobuf.Duration ttl = e.data == null ? null : e.data.ttl();
    if (ttl == null) {
      return;
    }
    Duration d = Duration.ofSeconds(ttl.getSeconds(), ttl.getNanos());
    Scheduler.Cancellable[] self = new Scheduler.Cancellable[1];
    self[0] = scheduler.schedule(() -> ctx.execute(() -> {
      if (ts.entries.get(e.name) == e && e.ttlTimer == self[0]) {
        e.ttlTimer = null;
        LOG.debug("{} {}: TTL expired", ts.type.abbreviation(), e.name);
        remove(ts, e);
      }
    }), d);
    e.ttlTimer = self[0];
  }

  private void notifyAll(TypeState ts, Entry e, Consumer<ResourceWatcher> call) {
    ctx.throwIfNotInThisContext();
    for (WatchImpl w : new ArrayList<>(e.watchers)) {
      deliver(w, call);
    }
    if (ts.wildcardOn(e.server)) {
      for (WatchImpl w : new ArrayList<>(ts.wildcardWatchers)) {
        deliver(w, call);
      }
    }
    Entry collection = ts.collectionFor(e);
    if (collection != null) { // TP1 "Glob": a member's news go to its collection's watchers
      for (WatchImpl w : new ArrayList<>(collection.watchers)) {
        deliver(w, call);
      }
    }
  }

  /**
   * Runs {@code task} on the context once every watcher callback queued so far has run: callbacks
   * run one at a time in order, so a marker queued behind them runs after them all.
   */
  private void afterCallbacks(Runnable task) {
    callbacks.execute(() -> ctx.execute(task));
  }

  private void deliver(WatchImpl w, Consumer<ResourceWatcher> call) {
    if (closing) {
      return;
    }
    callbacks.execute(() -> {
      if (!w.cancelled && !closing) {
        call.accept(w.watcher);
      }
    });
  }
}
