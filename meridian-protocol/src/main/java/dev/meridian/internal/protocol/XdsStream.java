package dev.meridian.internal.protocol;

import dev.meridian.xds.ResourceType;

import com.google.protobuf.Message;
import io.envoyproxy.envoy.config.core.v3.ControlPlane;
import io.envoyproxy.envoy.config.core.v3.Node;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * One xDS stream, whatever the variant: the node and its group, which type a request is for (ADS
 * requires {@code type_url}; a per-type service implies it), nonces, and fan-out of config changes
 * to the per-type states in make-before-break order. Pure: events in, {@link Outcome}s out; the
 * transport calls it from one serial executor.
 *
 * @param <Q> the request message of the variant
 * @param <S> the variant's per-type state
 */
public abstract class XdsStream<Q extends Message, S extends TypeState> {
  private final ResourceType serviceType; // null: ADS
  final Clock clock;
  /** What this stream may share with the hub's other streams (interned sets, shared answers). */
  final Sharing sharing;
  final Map<ResourceType, S> states = new EnumMap<>(ResourceType.class);
  private Node node;
  private ClientFeatures features;
  private String group;
  private HeartbeatPolicy heartbeats = HeartbeatPolicy.DEFAULT;
  /** The snapshot this stream last served from. */
  private Snapshot applied = Snapshot.empty();
  /** The config this stream's group and Secret access were last decided against. */
  private ServedConfig placedIn;
  /**
   * ADS sequencing: endpoints of clusters just sent that the client does not hold warm yet (see
   * {@link #awaitedFor}); listeners and routes wait for them.
   */
  private final NameSet awaitedEndpoints = new NameSet();
  private java.time.Instant awaitedSince;
  /** How long listeners and routes wait for a client to ask for new clusters' endpoints. */
  static final java.time.Duration AWAIT_ENDPOINTS_LIMIT = java.time.Duration.ofSeconds(5);

  /** The make-before-break chain; other types (secrets, runtime, ECDS) are not sequenced. */
  private static final List<ResourceType> CHAIN = List.of(ResourceType.CLUSTER,
      ResourceType.ENDPOINT, ResourceType.LISTENER, ResourceType.ROUTE, ResourceType.SCOPED_ROUTE,
      ResourceType.VIRTUAL_HOST);
  private long nonces;
  private boolean closed;
  /** The client certificate's identity, as the transport verified it; null: none (issue 20). */
  private String identity;
  /** Sent as every response's {@code control_plane}; null: none (see {@link #withControlPlane}). */
  private ControlPlane controlPlane;
  /** Whether a stream without a verified identity gets Secrets (opted in, local development). */
  private boolean plaintextSecrets;
  /** Who may have which Secret, as of the config last seen. */
  private SecretAccess secretAccess = SecretAccess.NONE;
  /** The Secrets this stream may see: {@code secretsView} of {@code secretsFrom}, cached. */
  private TypeSnapshot secretsFrom;
  private SecretAccess secretsAccess;
  private TypeSnapshot secretsView;
  /** Secrets withheld from this stream, and those of them already reported. */
  private Set<String> secretsWithheld = Set.of();
  private final Set<String> withheldReported = new java.util.HashSet<>();
  /** Resource names one request may carry, and this stream may be subscribed to in all. */
  private int maxResourceNames = DEFAULT_MAX_RESOURCE_NAMES;
  /**
   * The default of {@link #withMaxResourceNames}: ten times the 10,000 endpoint sets of the largest
   * fleets measured here, which an Envoy on ADS names in one EDS request (gRPC clients name a few
   * per type). A request at the bound is about 2-6 MiB and costs the server tens of MiB while it
   * is handled; 1.3 million names once cost 570 MiB and a 75 MB answer.
   */
  public static final int DEFAULT_MAX_RESOURCE_NAMES = 100_000;

  XdsStream(ResourceType serviceType, Clock clock, Sharing sharing) {
    this.serviceType = serviceType;
    this.clock = clock;
    this.sharing = java.util.Objects.requireNonNull(sharing, "sharing");
  }

  abstract String typeUrlOf(Q request);

  abstract Node nodeOf(Q request); // null when absent

  /** How many resource names {@code request} carries (subscribed, unsubscribed, resumed). */
  abstract int namesIn(Q request);

  abstract S newState(ResourceType type);

  abstract void handle(S state, Q request, TypeSnapshot snapshot, List<Outcome> out);

  /** Whether this variant serves the type at all. */
  boolean serves(ResourceType type) {
    return true;
  }

  abstract String variantName();

  /** Why this variant cannot answer {@code request} at all (the stream ends), or null. */
  String refusal(Q request) {
    return null;
  }

  /**
   * Why {@code name}, which this stream asks for, is absent for it: the per-resource error (TP3
   * {@code resource_errors}) that the type states report where they decide it does not exist.
   * NOT_FOUND, saying so when the name's xdstp authority is not one this server serves ({@code
   * serve --authority}, A47), since then it never will exist here. A Secret withheld from this
   * stream is said exactly as a missing one: a client without access must not learn which names
   * exist (the refusal is logged on the server, {@link Outcome.Withheld}).
   */
  private com.google.rpc.Status absence(ResourceType type, String name) {
    String authority = XdstpName.authorityOf(name);
    if (authority != null && placedIn != null && !placedIn.servesAuthority(authority)) {
      return TypeState.notFound(type, name, "does not exist here: its authority '" + authority
          + "' is not one this server serves (serve --authority)");
    }
    return TypeState.notFound(type, name, "does not exist");
  }

  public final List<Outcome> onRequest(Q req, ServedConfig config) {
    List<Outcome> out = new ArrayList<>(2);
    if (closed) {
      return out;
    }
    // Spec "Versioning and Node Identifier": only the first request must carry the node.
    if (node == null) {
      Node n = nodeOf(req);
      if (n == null) {
        return close(out, Outcome.CloseCode.INVALID_ARGUMENT,
            "the first request on a stream must carry a node");
      }
      String oversized = NodeBound.refusal(n);
      if (oversized != null) {
        return close(out, Outcome.CloseCode.INVALID_ARGUMENT, oversized);
      }
      node = n;
      features = ClientFeatures.of(n);
      ServedConfig.Placement p = config.place(node, identity);
      if (p.isDenied()) {
        return close(out, Outcome.CloseCode.PERMISSION_DENIED, p.denied());
      }
      group = p.group();
      placedIn = config;
      secretAccess = config.secretAccess();
    } else if (config != placedIn) {
      // A reload this stream has not been handed yet: its placement and who may have which
      // Secret are decided again before the request is answered from the new config.
      out.addAll(onConfig(config, Map.of()));
      if (closed) {
        return out;
      }
    }
    ResourceType type;
    String typeUrl = typeUrlOf(req);
    if (serviceType == null) {
      if (typeUrl.isEmpty()) {
        return close(out, Outcome.CloseCode.INVALID_ARGUMENT,
            "type_url is required on the aggregated (ADS) stream");
      }
      Optional<ResourceType> t = ResourceType.fromTypeUrl(typeUrl);
      if (t.isEmpty()) {
        return close(out, Outcome.CloseCode.INVALID_ARGUMENT,
            "unknown type_url '" + typeUrl + "'; this server serves "
                + String.join(", ", ResourceType.all().stream().map(ResourceType::typeUrl).toList()));
      }
      type = t.get();
    } else {
      type = serviceType;
      if (!typeUrl.isEmpty() && !typeUrl.equals(type.typeUrl())) {
        return close(out, Outcome.CloseCode.INVALID_ARGUMENT, "type_url '" + typeUrl
            + "' does not match this service, which serves " + type.typeUrl());
      }
    }
    if (!serves(type)) {
      return close(out, Outcome.CloseCode.INVALID_ARGUMENT,
          type.typeUrl() + " is served only over Incremental xDS (" + type.deltaOnlyService()
              + " or Delta ADS)");
    }
    int named = namesIn(req);
    if (named > maxResourceNames) {
      return close(out, Outcome.CloseCode.RESOURCE_EXHAUSTED, tooManyNames(named, "request"));
    }
    String refused = refusal(req);
    if (refused != null) {
      return close(out, Outcome.CloseCode.INVALID_ARGUMENT, refused);
    }
    S state = states.computeIfAbsent(type, this::create);
    applied = config.snapshot(group);
    handle(state, req, visible(state, applied), out);
    int held = namesSubscribed();
    if (held > maxResourceNames) {
      // What this request would have been answered is not sent: the stream ends here.
      out.removeIf(o -> o instanceof Outcome.Send);
      return close(out, Outcome.CloseCode.RESOURCE_EXHAUSTED, tooManyNames(held, "stream"));
    }
    pump(out);
    reportWithheld(out);
    return out;
  }

  /** The resource names this stream is subscribed to, over every type. */
  private int namesSubscribed() {
    int n = 0;
    for (S s : states.values()) {
      n += s.subscription.names().size();
    }
    return n;
  }

  private String tooManyNames(int named, String what) {
    return "this " + what + " names " + named + " resources; the server allows at most "
        + maxResourceNames + " per request and per stream (--max-resource-names)";
  }

  /**
   * What {@code s} is answered from: its type in {@code snapshot}, without the Secrets this stream
   * may not have (issue 20: a Secret it may not have does not exist for it) and with the removals
   * that still linger (make-before-break).
   */
  private TypeSnapshot visible(S s, Snapshot snapshot) {
    TypeSnapshot t = snapshot.get(s.type);
    if (s.type == ResourceType.SECRET) {
      t = secrets(t);
    }
    return s.withLingering(t);
  }

  private TypeSnapshot secrets(TypeSnapshot all) {
    if (all == secretsFrom && secretAccess == secretsAccess) {
      return secretsView;
    }
    Set<String> withheld = new java.util.TreeSet<>();
    // No rule names a Secret: every Secret of the group is this stream's (no copy of the view).
    boolean allAllowed = secretAccess.rules().isEmpty() && (identity != null || plaintextSecrets);
    List<XdsResource> allowed = new ArrayList<>();
    for (XdsResource r : allAllowed ? List.<XdsResource>of() : all.list()) {
      if (secretAccess.allows(r.name(), identity, plaintextSecrets)) {
        allowed.add(r);
      } else {
        withheld.add(r.name());
      }
    }
    secretsFrom = all;
    secretsAccess = secretAccess;
    secretsView = withheld.isEmpty() ? all : TypeSnapshot.of(allowed);
    secretsWithheld = withheld;
    withheldReported.retainAll(withheld);
    return secretsView;
  }


  /** Reports, once each, the Secrets withheld from this stream that it asks for. */
  private void reportWithheld(List<Outcome> out) {
    S s = states.get(ResourceType.SECRET);
    if (s == null || secretsWithheld.isEmpty() || closed) {
      return;
    }
    for (String name : secretsWithheld) {
      if (s.subscription.covers(name) && withheldReported.add(name)) {
        out.add(new Outcome.Withheld(ResourceType.SECRET, name, identity == null
            ? "no verified identity" : "identity '" + identity + "' is not allowed"));
      }
    }
  }

  private S create(ResourceType type) {
    S state = newState(type);
    state.controlPlane = controlPlane;
    state.absence = n -> absence(type, n);
    if (isAds() && CHAIN.contains(type)) {
      state.gate = this::mayRespond;
      if (type == ResourceType.CLUSTER) {
        state.onSent = this::clustersSent;
      } else if (type == ResourceType.ENDPOINT) {
        state.onSent = this::endpointsSent;
      } else if (type == ResourceType.LISTENER) {
        state.onSent = this::listenersSent;
      }
    }
    return state;
  }

  /**
   * Spec "Eventual consistency considerations": on ADS, a type of the chain (clusters, endpoints,
   * listeners, routes, scoped routes, virtual hosts) is sent only once every earlier type has
   * nothing un-ACKed or pending, and listeners and later wait for the endpoints of new clusters.
   */
  private boolean mayRespond(ResourceType type) {
    for (ResourceType earlier : CHAIN) {
      if (earlier == type) {
        break;
      }
      S s = states.get(earlier);
      if (s != null && !s.settled()) {
        return false;
      }
    }
    return type.ordinal() <= ResourceType.ENDPOINT.ordinal() || !awaitingEndpoints();
  }

  /**
   * Whether endpoints of clusters just sent are still expected. Bounded: a client that never asks
   * for them (it uses no EDS on this stream, or not for that cluster) does not hold routes forever.
   */
  private boolean awaitingEndpoints() {
    if (awaitedEndpoints.isEmpty()) {
      return false;
    }
    awaitedEndpoints.removeIf(n -> applied.get(ResourceType.ENDPOINT).get(n) == null);
    if (!states.containsKey(ResourceType.ENDPOINT)
        || clock.instant().isAfter(awaitedSince.plus(AWAIT_ENDPOINTS_LIMIT))) {
      awaitedEndpoints.clear();
    }
    return !awaitedEndpoints.isEmpty();
  }

  /** Whether the transport should call {@link #onTick} even without TTLs (a bounded wait runs). */
  public final boolean wantsTick() {
    return !awaitedEndpoints.isEmpty();
  }

  /**
   * Make-before-break, the rule: the endpoint set that listeners and routes must wait for now
   * that {@code cluster} went out, or null. Spec "Resource warming": a client warms a cluster until
   * it has its endpoints, so a route sent meanwhile would reach a cluster that has none. Hence a
   * cluster holds routes unless the client already runs it warm: it ACKed the cluster before and
   * asks for the endpoints it names (an endpoint set asked for goes out before any route: the
   * chain). A new cluster, or one whose endpoints (after a change of EDS service name, say) the
   * client does not ask for yet, holds them.
   * An update of a warm cluster protects nothing (spec "Eventual consistency considerations"):
   * Envoy keeps serving the old one while it re-warms (it asks again: resendOnAsk), and gRPC
   * clients just apply it and never ask again, so waiting for them held routes 5 s (issue 18).
   *
   * @param clustersAcked the clusters the client ACKed, before this one went out (what it runs)
   * @param endpointsAsked the client's endpoint subscription
   * @param endpoints the endpoints in force: a set the config lacks is not waited for
   */
  static String awaitedFor(XdsResource cluster, VersionMap clustersAcked,
      Subscription endpointsAsked, TypeSnapshot endpoints) {
    String cla = edsServiceName(cluster);
    if (cla == null || endpoints.get(cla) == null) {
      return null;
    }
    boolean warm = clustersAcked.containsKey(cluster.name()) && endpointsAsked.covers(cla);
    return warm ? null : cla;
  }

  /**
   * Clusters went out: their endpoints are resent when asked, and awaited before routes where the
   * client does not run them warm ({@link #awaitedFor}). After a reload every stream in sync sends
   * the same list of changed clusters; an interning {@link Sharing} works this out once for the
   * streams in the same state.
   */
  private void clustersSent(List<XdsResource> clusters, TypeSnapshot snapshot) {
    S eds = states.get(ResourceType.ENDPOINT);
    if (eds == null) {
      return;
    }
    Warming w = sharing.warming(clusters, applied.get(ResourceType.ENDPOINT));
    eds.resendOnAsk.addShared(w.endpointNames);
    Set<String> awaited = w.awaited(states.get(ResourceType.CLUSTER).acked, eds.subscription);
    if (!awaited.isEmpty()) {
      if (awaitedEndpoints.isEmpty()) {
        awaitedSince = clock.instant();
      }
      awaitedEndpoints.addShared(awaited);
    }
  }

  /** The ClusterLoadAssignment name an EDS cluster asks for; null for other clusters. */
  static String edsServiceName(XdsResource r) {
    io.envoyproxy.envoy.config.cluster.v3.Cluster c = (io.envoyproxy.envoy.config.cluster.v3.Cluster) r.message();
    if (c.getType() != io.envoyproxy.envoy.config.cluster.v3.Cluster.DiscoveryType.EDS) {
      return null;
    }
    return c.getEdsClusterConfig().getServiceName().isEmpty() ? c.getName()
        : c.getEdsClusterConfig().getServiceName();
  }

  /** Listeners went out: their RDS route configurations are resent when asked. */
  private void listenersSent(List<XdsResource> listeners, TypeSnapshot snapshot) {
    S rds = states.get(ResourceType.ROUTE);
    if (rds != null) {
      for (XdsResource r : listeners) {
        rds.resendOnAsk.addAll(RdsNames.of((io.envoyproxy.envoy.config.listener.v3.Listener) r.message()));
      }
    }
  }

  /** Endpoint sets went out: those awaited are no longer (every one, when all of them went out). */
  private void endpointsSent(List<XdsResource> endpoints, TypeSnapshot snapshot) {
    if (endpoints.size() == snapshot.size()) {
      awaitedEndpoints.clear();
    } else {
      endpoints.forEach(r -> awaitedEndpoints.remove(r.name()));
    }
  }

  /**
   * Lets gated types respond in chain order, then releases lingering removals once listeners,
   * routes and virtual hosts have settled: stale clusters and endpoints are removed last.
   */
  private void pump(List<Outcome> out) {
    if (!isAds()) {
      return;
    }
    for (ResourceType t : CHAIN) {
      S s = states.get(t);
      if (s != null) {
        s.respondIfIdle(visible(s, applied), this::nextNonce, out);
      }
    }
    boolean lingering = false;
    for (ResourceType t : List.of(ResourceType.CLUSTER, ResourceType.ENDPOINT)) {
      S s = states.get(t);
      lingering |= s != null && !s.lingering.isEmpty();
    }
    if (!lingering) {
      return;
    }
    for (ResourceType t : CHAIN.subList(2, CHAIN.size())) {
      S s = states.get(t);
      if (s != null && !s.settled()) {
        return;
      }
    }
    if (awaitingEndpoints()) {
      return;
    }
    for (ResourceType t : List.of(ResourceType.CLUSTER, ResourceType.ENDPOINT)) {
      S s = states.get(t);
      if (s != null && !s.lingering.isEmpty()) {
        s.markDirty(new ArrayList<>(s.lingering.keySet())); // a copy: lingering is cleared next
        s.lingering.clear();
        s.respondIfIdle(applied.get(t), this::nextNonce, out);
      }
    }
  }

  /**
   * The served config changed. {@code changes} maps group → type → changed names, computed once
   * per reload by the caller; a node whose group changed is re-evaluated in full.
   */
  public final List<Outcome> onConfig(ServedConfig config,
      Map<String, Map<ResourceType, Set<String>>> changes) {
    List<Outcome> out = new ArrayList<>();
    if (closed || node == null) {
      return out;
    }
    ServedConfig.Placement p = config.place(node, identity);
    if (p.isDenied()) {
      return close(out, Outcome.CloseCode.PERMISSION_DENIED, p.denied());
    }
    placedIn = config;
    // Who may have which Secret changed: every Secret is looked at again.
    boolean accessChanged = secretAccess != config.secretAccess()
        && !secretAccess.equals(config.secretAccess());
    secretAccess = config.secretAccess();
    String newGroup = p.group();
    boolean moved = !newGroup.equals(group);
    group = newGroup;
    Map<ResourceType, Set<String>> changed = moved ? null
        : changes.getOrDefault(group, Collections.emptyMap());
    Snapshot snapshot = config.snapshot(group);
    Snapshot previous = applied;
    applied = snapshot;
    if (isAds() && changed != null) {
      // Removed clusters and endpoints linger until the routes that used them have moved on.
      for (ResourceType t : List.of(ResourceType.CLUSTER, ResourceType.ENDPOINT)) {
        S s = states.get(t);
        if (s == null || !changed.containsKey(t)) {
          continue;
        }
        Set<String> names = changed.get(t);
        if (s.lingering.isEmpty() && sharing.hasAll(snapshot.get(t), names)) {
          continue; // changed, none removed: nothing lingers (checked once per shared change)
        }
        for (String n : names) {
          XdsResource before = previous.get(t).get(n);
          if (snapshot.get(t).get(n) != null) {
            s.lingering.remove(n);
          } else if (before != null && s.subscription.covers(n)) {
            s.lingering.putIfAbsent(n, before);
          }
        }
      }
    } else {
      for (S s : states.values()) {
        s.lingering.clear();
      }
    }
    // EnumMap iterates in make-before-break order (see ResourceType).
    for (S s : states.values()) {
      if (changed == null || (accessChanged && s.type == ResourceType.SECRET)) {
        s.onSnapshot(visible(s, snapshot), null, this::nextNonce, out);
      } else if (changed.containsKey(s.type)) {
        s.onSnapshot(visible(s, snapshot), changed.get(s.type), this::nextNonce, out);
      }
    }
    pump(out);
    reportWithheld(out);
    return out;
  }

  /**
   * Which config changes concern this stream, for a hub's fan-out index (DESIGN "Fan-out"):
   * {@link #onConfig} acts only on changes of the types it holds whose changed names its
   * subscription covers (or any name, on a wildcard). While removals linger or endpoints are
   * awaited, any change may release them: then {@code everything}. Immutable; the transport reads
   * it on the stream's executor after each event and publishes it to the index.
   *
   * @param group the node's group, null before the first request (nothing concerns the stream)
   * @param types per type held: the subscription as of this event
   */
  public record Interest(String group, boolean everything, Map<ResourceType, Names> types) {
    public static final Interest NONE = new Interest(null, false, Map.of());

    /** One type's subscription: a wildcard, and/or explicit names (an immutable set). */
    public record Names(boolean wildcard, Set<String> names) {}

    /** Whether a change of {@code changed} names of {@code type} reaches this stream. */
    public boolean concerns(ResourceType type, Set<String> changed) {
      if (everything) {
        return true;
      }
      Names n = types.get(type);
      if (n == null) {
        return false;
      }
      if (n.wildcard()) {
        return true;
      }
      for (String name : changed) {
        if (n.names().contains(name)) {
          return true;
        }
      }
      return false;
    }
  }

  private Interest interest = Interest.NONE;

  /** This stream's {@link Interest}; the same object as long as it has not changed. */
  public final Interest interest() {
    if (closed || node == null) {
      return Interest.NONE;
    }
    boolean everything = !awaitedEndpoints.isEmpty();
    for (S s : states.values()) {
      everything |= !s.lingering.isEmpty();
    }
    Interest i = interest;
    if (i.everything() == everything && group.equals(i.group()) && sameTypes(i.types())) {
      return i;
    }
    Map<ResourceType, Interest.Names> types = new EnumMap<>(ResourceType.class);
    for (S s : states.values()) {
      types.put(s.type, new Interest.Names(covers(s.subscription), s.subscription.names()));
    }
    return interest = new Interest(group, everything, Collections.unmodifiableMap(types));
  }

  /**
   * Whether a subscription may cover names it does not list: a wildcard, or glob collections
   * (TP1 "Glob"), whose members the index cannot know by name; such a stream hears of every change
   * of the type and its rules pick the members.
   */
  private static boolean covers(Subscription s) {
    return s.isWildcard() || s.hasGlobs();
  }

  private boolean sameTypes(Map<ResourceType, Interest.Names> types) {
    if (types.size() != states.size()) {
      return false;
    }
    for (S s : states.values()) {
      Interest.Names n = types.get(s.type);
      if (n == null || n.wildcard() != covers(s.subscription)
          || !n.names().equals(s.subscription.names())) {
        return false;
      }
    }
    return true;
  }

  /**
   * The served config moved on without this stream being handed the change (a hub's index did not
   * know yet what concerns it): re-evaluates what changed since the snapshot it last served from.
   */
  public final List<Outcome> catchUp(ServedConfig config) {
    if (closed || node == null) {
      return new ArrayList<>();
    }
    return onConfig(config, Map.of(group, config.snapshot(group).changedSince(applied)));
  }

  /**
   * Who is at the other end (issue 20): the identity of its verified client certificate (null:
   * none), and whether a stream without one may have Secrets. Set before the first request.
   */
  public final XdsStream<Q, S> withIdentity(String identity, boolean plaintextSecrets) {
    this.identity = identity;
    this.plaintextSecrets = plaintextSecrets;
    return this;
  }

  /**
   * Names the server in every response of this stream (issue 21): {@code control_plane} of each
   * DiscoveryResponse and DeltaDiscoveryResponse, heartbeats included, so that CSDS and client
   * logs show which replica served a config. The hub's constant; null (the default) leaves the
   * field out. Set before the first request.
   */
  public final XdsStream<Q, S> withControlPlane(ControlPlane controlPlane) {
    this.controlPlane = controlPlane;
    return this;
  }

  /** Who may have which Secret, as of the config this stream last saw. */
  final SecretAccess secretAccess() {
    return secretAccess;
  }

  /**
   * The most resource names one request may carry, and this stream may be subscribed to over
   * every type; beyond, the stream ends RESOURCE_EXHAUSTED. Set before the first request.
   */
  public final XdsStream<Q, S> withMaxResourceNames(int max) {
    if (max < 1) {
      throw new IllegalArgumentException("max resource names must be at least 1: " + max);
    }
    this.maxResourceNames = max;
    return this;
  }

  /** The verified identity of the client, or null. */
  public final String identity() {
    return identity;
  }

  /** Sets how often TTL resources are heartbeated; returns this. */
  public final XdsStream<Q, S> withHeartbeats(HeartbeatPolicy policy) {
    this.heartbeats = policy;
    return this;
  }

  /**
   * Time passed (the transport calls this periodically, with the config in force): sends the
   * heartbeats that are due.
   */
  public final List<Outcome> onTick(ServedConfig config) {
    List<Outcome> out = new ArrayList<>();
    if (closed || node == null) {
      return out;
    }
    Snapshot snapshot = config.snapshot(group);
    for (S s : states.values()) {
      s.onTick(visible(s, snapshot), heartbeats, this::nextNonce, out);
    }
    pump(out);
    return out;
  }

  final ClientFeatures features() {
    return features;
  }

  private List<Outcome> close(List<Outcome> out, Outcome.CloseCode code, String message) {
    closed = true;
    out.add(new Outcome.Close(code, message));
    return out;
  }

  final String nextNonce() {
    return Long.toString(++nonces);
  }

  final String nodeId() {
    return node.getId();
  }

  // --- status ---

  public final Node node() {
    return node;
  }

  public final String group() {
    return group;
  }

  public final boolean isAds() {
    return serviceType == null;
  }

  /** The per-type service's type, or null on ADS. */
  public final ResourceType serviceType() {
    return serviceType;
  }

  /** The type a request is for: the service's, or on ADS its type_url's (null if unknown). */
  public final ResourceType requestType(Q request) {
    return serviceType != null ? serviceType
        : ResourceType.fromTypeUrl(typeUrlOf(request)).orElse(null);
  }

  /** "SotW" or "Delta". */
  public final String variant() {
    return variantName();
  }

  /**
   * A point-in-time view of one type's state on this stream, for admin and CSDS.
   *
   * @param sentVersion the last version_info (SotW) or system_version_info (Delta) sent
   * @param sentResourceVersions name → version the client was last sent (or, on reconnect, proved
   *     to hold)
   * @param ackedResourceVersions name → version of each resource the client ACKed (what it runs)
   * @param lastResponseVersions name → version of the resources in the latest response: in flight
   *     while {@code pendingNonce} is set, rejected if {@code lastNack} is for that response
   */
  public record TypeStatus(ResourceType type, boolean wildcard, Set<String> names,
      String sentVersion, String ackedVersion, String pendingNonce, Nack lastNack,
      Map<String, String> sentResourceVersions, Map<String, String> ackedResourceVersions,
      Map<String, String> lastResponseVersions) {}

  private static Map<String, String> lastResponse(TypeState s) {
    return s.lastResponse == null ? Map.of() : new java.util.TreeMap<>(s.lastResponse.toMap());
  }

  public final List<TypeStatus> status() {
    List<TypeStatus> list = new ArrayList<>();
    for (S s : states.values()) {
      list.add(new TypeStatus(s.type, s.subscription.isWildcard(),
          Set.copyOf(s.subscription.names()), s.sentVersion(), s.ackedVersion, s.pendingNonce(),
          s.lastNack, s.resourceVersions(), s.acked.toMap(), lastResponse(s)));
    }
    return list;
  }
}
