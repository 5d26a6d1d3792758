package dev.meridian.client;

import dev.meridian.protocol.ResourceType;
import dev.meridian.protocol.XdsResource;
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
 * one watcher API; the bootstrap's top-level server serves plain names, authorities serve their
 * {@code xdstp://} names (gRFC A47). All state lives on one {@link SerializingContext}; watchers
 * are called serialized on the callback executor. The model is grpc-java's XdsClientImpl.
 */
public final class XdsClient implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger("dev.meridian.client");

  /** Which flavour of the protocol (spec "Variants of the xDS Transport Protocol"). */
  public enum Protocol { SOTW, DELTA }

  /** One aggregated stream for all types, or one stream per type. */
  public enum Mode { ADS, PER_TYPE }

  /**
   * @param doesNotExistTimeout spec "Knowing When a Requested Resource Does Not Exist": 15 s in gRPC
   * @param callbackExecutor where watchers run (serialized); null: a daemon thread of our own
   * @param scheduler the clock and timers; null: the system clock
   * @param random jitter source for the reconnect backoff
   */
  public record Options(Protocol protocol, Mode mode, Duration doesNotExistTimeout,
      Executor callbackExecutor, Scheduler scheduler, DoubleSupplier random) {
    public Options {
      Objects.requireNonNull(protocol);
      Objects.requireNonNull(mode);
      Objects.requireNonNull(doesNotExistTimeout);
      if (random == null) {
        random = () -> ThreadLocalRandom.current().nextDouble();
      }
    }

    public static Options defaults() {
      return new Options(Protocol.SOTW, Mode.ADS, Duration.ofSeconds(15), null, null, null);
    }

    public Options withProtocol(Protocol p) {
      return new Options(p, mode, doesNotExistTimeout, callbackExecutor, scheduler, random);
    }

    public Options withMode(Mode m) {
      return new Options(protocol, m, doesNotExistTimeout, callbackExecutor, scheduler, random);
    }

    public Options withDoesNotExistTimeout(Duration d) {
      return new Options(protocol, mode, d, callbackExecutor, scheduler, random);
    }

    public Options withCallbackExecutor(Executor e) {
      return new Options(protocol, mode, doesNotExistTimeout, e, scheduler, random);
    }

    public Options withScheduler(Scheduler s) {
      return new Options(protocol, mode, doesNotExistTimeout, callbackExecutor, s, random);
    }

    public Options withRandom(DoubleSupplier r) {
      return new Options(protocol, mode, doesNotExistTimeout, callbackExecutor, scheduler, r);
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
  /** One stream per server and scope (ADS, or per type). */
  record StreamKey(Bootstrap.ServerInfo server, StreamScope scope) {}

  private final Map<StreamKey, ClientStream<?>> streams = new HashMap<>();
  private boolean shutdown;
  /** Set by close() at once (shutdown is set later, on the context): no more callbacks. */
  private volatile boolean closing;

  /**
   * Connects with gRPC: to the bootstrap's first server, and for {@code xdstp://} names to their
   * authority's server.
   */
  public static XdsClient create(Bootstrap bootstrap, Options options) {
    // TLS files are re-read on the client's own scheduler (gRFC A65 refresh_interval).
    return new XdsClient(bootstrap, options,
        (server, scheduler) -> new GrpcXdsTransport(server, scheduler));
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

  /** Watches one resource by name. A cached value (or known absence) is delivered at once. */
  public Watch watch(ResourceType type, String name, ResourceWatcher watcher) {
    Objects.requireNonNull(name, "name");
    checkServable(type);
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

  public Bootstrap bootstrap() {
    return bootstrap;
  }

  @Override
  public void close() {
    closing = true;
    ctx.execute(() -> {
      if (shutdown) {
        return;
      }
      shutdown = true;
      for (ClientStream<?> s : streams.values()) {
        s.shutdown();
      }
      streams.clear();
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
        LOG.log(System.Logger.Level.DEBUG, "closing", e);
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // State (touched only on ctx)

  private XdsTransport transportFor(Bootstrap.ServerInfo server) {
    synchronized (transports) {
      return transports.computeIfAbsent(server, s -> transportFactory.apply(s, scheduler));
    }
  }

  /** One resource the client is interested in or (for wildcard) knows about. */
  private static final class Entry {
    final String name;
    /** The server it is subscribed on; null: its authority is not in the bootstrap. */
    final Bootstrap.ServerInfo server;
    final List<WatchImpl> watchers = new ArrayList<>();
    ResourceUpdate data;
    boolean absent;
    Scheduler.Cancellable dneTimer;
    Scheduler.Cancellable ttlTimer;

    Entry(String name, Bootstrap.ServerInfo server) {
      this.name = name;
      this.server = server;
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

  /** Per type: subscriptions, cache and the accepted version per server. */
  private static final class TypeState {
    final ResourceType type;
    final Bootstrap.ServerInfo primary;
    final Map<String, Entry> entries = new LinkedHashMap<>();
    /** Wildcard watches are served by the top-level server (gRFC A47). */
    final List<WatchImpl> wildcardWatchers = new ArrayList<>();
    final Map<Bootstrap.ServerInfo, String> acceptedVersions = new HashMap<>();
    boolean responded;

    TypeState(ResourceType type, Bootstrap.ServerInfo primary) {
      this.type = type;
      this.primary = primary;
    }

    boolean wildcard() {
      return !wildcardWatchers.isEmpty();
    }

    boolean wildcardOn(Bootstrap.ServerInfo server) {
      return wildcard() && primary.equals(server);
    }

    String acceptedVersion(Bootstrap.ServerInfo server) {
      return acceptedVersions.getOrDefault(server, "");
    }

    ResourceStore.Interest interest(Bootstrap.ServerInfo server) {
      Set<String> names = new LinkedHashSet<>();
      for (Entry e : entries.values()) {
        if (!e.watchers.isEmpty() && server.equals(e.server)) {
          names.add(e.name);
        }
      }
      return new ResourceStore.Interest(wildcardOn(server), names);
    }

    /** What a reconnecting stream tells the server it holds (Delta initial_resource_versions). */
    Map<String, String> heldVersions(Bootstrap.ServerInfo server) {
      Map<String, String> held = new LinkedHashMap<>();
      for (Entry e : entries.values()) {
        if (e.data != null && server.equals(e.server)
            && (wildcardOn(server) || !e.watchers.isEmpty())) {
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
    return types.computeIfAbsent(type, t -> new TypeState(t, bootstrap.primary()));
  }

  /** Types with at least one subscription, in make-before-break order (CDS, EDS, LDS, RDS...). */
  private List<ResourceType> subscribedTypes(Bootstrap.ServerInfo server, StreamScope scope) {
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

  private StreamKey keyFor(Bootstrap.ServerInfo server, ResourceType type) {
    return new StreamKey(server, switch (options.mode()) {
      case ADS -> StreamScope.ADS;
      case PER_TYPE -> StreamScope.of(type);
    });
  }

  private ClientStream<?> streamFor(Bootstrap.ServerInfo server, ResourceType type) {
    ctx.throwIfNotInThisContext();
    StreamKey key = keyFor(server, type);
    ClientStream<?> s = streams.get(key);
    if (s == null) {
      ClientStream.Deps deps = new ClientStream.Deps(transportFor(server), bootstrap.node(),
          streamSide, streamSide, ctx, scheduler, options.random());
      s = switch (options.protocol()) {
        case SOTW -> new SotwClientStream(server, key.scope(), deps);
        case DELTA -> new DeltaClientStream(server, key.scope(), deps);
      };
      streams.put(key, s);
      s.start();
    }
    return s;
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
        String v = ts.acceptedVersion(bootstrap.primary());
        deliver(w, x -> x.onResponseProcessed(ts.type, v, false));
      }
      if (first) {
        streamFor(bootstrap.primary(), w.type).subscriptionChanged(w.type);
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
    Map<Bootstrap.ServerInfo, List<Entry>> byServer = new LinkedHashMap<>();
    for (Entry e : fresh) {
      byServer.computeIfAbsent(e.server, k -> new ArrayList<>()).add(e);
    }
    byServer.forEach((server, entries) -> {
      ResourceType type = ws.get(0).type;
      ClientStream<?> s = streamFor(server, type);
      s.subscriptionChanged(type);
      if (s.ready) {
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
        n -> new Entry(n, bootstrap.serverFor(n).orElse(null)));
    boolean newlyNamed = e.watchers.isEmpty();
    e.watchers.add(w);
    if (e.data != null) {
      ResourceUpdate u = e.data;
      deliver(w, x -> x.onChanged(u));
    } else if (e.absent) {
      deliver(w, x -> x.onDoesNotExist(w.type, w.name));
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
    Bootstrap.ServerInfo server = bootstrap.primary();
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
      if (changed && (!ts.wildcard() || e.server == null || !e.server.equals(ts.primary))) {
        e.cancelTimers();
        ts.entries.remove(w.name);
      } else if (changed && e.dneTimer != null) {
        e.dneTimer.cancel();
        e.dneTimer = null;
      }
    }
    if (changed && server != null) {
      ClientStream<?> s = streams.get(keyFor(server, w.type));
      if (s != null) {
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
    if (e.data != null || e.absent || e.dneTimer != null || e.watchers.isEmpty()) {
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

  final StreamSide streamSide = new StreamSide();

  /** The client as its streams see it; every method asserts the context. */
  final class StreamSide implements ResourceStore, ResponseHandler {
    @Override
    public List<ResourceType> subscribedTypes(Bootstrap.ServerInfo server, StreamScope scope) {
      return XdsClient.this.subscribedTypes(server, scope);
    }

    @Override
    public Interest interest(Bootstrap.ServerInfo server, ResourceType type) {
      ctx.throwIfNotInThisContext();
      TypeState ts = types.get(type);
      return ts == null ? Interest.NONE : ts.interest(server);
    }

    @Override
    public String acceptedVersion(Bootstrap.ServerInfo server, ResourceType type) {
      ctx.throwIfNotInThisContext();
      TypeState ts = types.get(type);
      return ts == null ? "" : ts.acceptedVersion(server);
    }

    @Override
    public Map<String, String> heldVersions(Bootstrap.ServerInfo server, ResourceType type) {
      ctx.throwIfNotInThisContext();
      TypeState ts = types.get(type);
      return ts == null ? Map.of() : ts.heldVersions(server);
    }

    @Override
    public void handleStreamReady(Bootstrap.ServerInfo server, StreamScope scope) {
      streamReady(server, scope);
    }

    @Override
    public void handleStreamClosed(Bootstrap.ServerInfo server, StreamScope scope, Status status) {
      streamClosed(server, scope, status);
    }

    @Override
    public List<String> handleSotwResponse(Bootstrap.ServerInfo server, DecodedResponse response,
        String versionInfo, Set<String> namedInEveryRequest, Runnable processed) {
      try {
        return applySotw(server, response, versionInfo, namedInEveryRequest);
      } finally {
        afterCallbacks(processed); // even if applying threw: the stream must read on
      }
    }

    @Override
    public List<String> handleDeltaResponse(Bootstrap.ServerInfo server, DecodedResponse response,
        String systemVersionInfo, Runnable processed) {
      try {
        return applyDelta(server, response, systemVersionInfo);
      } finally {
        afterCallbacks(processed); // even if applying threw: the stream must read on
      }
    }
  }

  private void streamReady(Bootstrap.ServerInfo server, StreamScope scope) {
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

  private void streamClosed(Bootstrap.ServerInfo server, StreamScope scope, Status status) {
    ctx.throwIfNotInThisContext();
    for (ResourceType t : subscribedTypes(server, scope)) {
      TypeState ts = state(t);
      String failed = ConnectFailure.describe(status, server.serverUri());
      XdsError err = new XdsError(XdsError.Kind.UNAVAILABLE, t, null, failed != null ? failed
          : "xDS stream to " + server.serverUri() + " closed: " + status.getCode()
              + (status.getDescription() == null ? "" : " " + status.getDescription()));
      for (Entry e : ts.entries.values()) {
        // The timers restart when the next stream is ready (grpc-java does the same).
        if (server.equals(e.server) && e.dneTimer != null) {
          e.dneTimer.cancel();
          e.dneTimer = null;
        }
      }
      for (WatchImpl w : distinctWatchers(ts, server)) {
        deliver(w, x -> x.onError(err));
      }
    }
  }

  /**
   * A SotW response: its resources, then (spec "Grouping Resources into Responses") for
   * Listener/Cluster the deletion of what it omits. Returns the problems (empty: ACK).
   */
  private List<String> applySotw(Bootstrap.ServerInfo server, DecodedResponse d, String version,
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
    if (d.type.fullStateInSotw() && !d.unnamedErrors && !server.ignoreResourceDeletion()) {
      for (Entry e : new ArrayList<>(ts.entries.values())) {
        if (!seen.contains(e.name) && server.equals(e.server)
            && (e.dneTimer == null || !e.dneTimer.isPending()
                || namedInEveryRequest.contains(e.name))) {
          remove(ts, e);
        }
      }
    }
    responseProcessed(ts, server, d);
    return d.errors;
  }

  /** A Delta response: its resources, then its removed_resources. Returns the problems. */
  private List<String> applyDelta(Bootstrap.ServerInfo server, DecodedResponse d,
      String systemVersion) {
    ctx.throwIfNotInThisContext();
    TypeState ts = state(d.type);
    applyResources(ts, server, d, systemVersion);
    // Spec "Incremental xDS", "Knowing When a Requested Resource Does Not Exist": the server names
    // a subscribed resource that does not exist in removed_resources, no timeout needed.
    for (String name : d.removed) {
      Entry e = ts.entries.get(name);
      if (e != null && server.equals(e.server)) {
        remove(ts, e);
      }
    }
    responseProcessed(ts, server, d);
    return d.errors;
  }

  /**
   * Applies what a response carries, whichever the variant, and returns the names it mentioned.
   * Valid resources are used even when others are rejected; rejected ones keep their last good
   * value.
   */
  private Set<String> applyResources(TypeState ts, Bootstrap.ServerInfo server, DecodedResponse d,
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
        if (!ts.wildcardOn(server)) {
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
      XdsResource r = XdsResource.of(d.type, it.message(), it.ttl(), List.of());
      boolean changed = e.data == null || !e.data.resource().version().equals(r.version());
      ResourceUpdate u = new ResourceUpdate(r, it.version(), it.ttl());
      e.data = u;
      e.absent = false;
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

  /** Every watcher of the type hears that a response was processed, and whether it was NACKed. */
  private void responseProcessed(TypeState ts, Bootstrap.ServerInfo server, DecodedResponse d) {
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
  private List<WatchImpl> distinctWatchers(TypeState ts, Bootstrap.ServerInfo server) {
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
        LOG.log(System.Logger.Level.DEBUG, "{0} {1}: TTL expired", ts.type.abbreviation(), e.name);
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
