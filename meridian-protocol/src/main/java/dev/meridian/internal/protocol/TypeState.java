package dev.meridian.internal.protocol;

import dev.meridian.xds.ResourceType;

import com.google.rpc.Status;
import io.envoyproxy.envoy.service.discovery.v3.ResourceError;
import io.envoyproxy.envoy.service.discovery.v3.ResourceName;
import java.time.Clock;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The rules shared by every variant for one resource type on one stream: the subscription, nonces,
 * ACK/NACK, flow control and change tracking. SotW and Delta are thin policies over it that decide
 * what a response holds. Not thread-safe: the owning stream uses it from one serial executor.
 */
abstract class TypeState {
  /** google.rpc.Code values of per-resource errors (the enum is not on this module's path). */
  static final int NOT_FOUND = 5;
  final ResourceType type;
  final ClientFeatures features;
  final Clock clock;
  /** The hub's: interned subscriptions and shared answers (the rules hold without it). */
  final Sharing sharing;
  final Subscription subscription;
  /** For resources with a TTL that the client was sent: when it last heard of each (spec "TTL"). */
  final java.util.Map<String, java.time.Instant> ttlSentAt = new java.util.HashMap<>();
  boolean started;
  String lastNonce; // most recent nonce sent for this type
  boolean awaitingAck;
  String ackedVersion = "";
  Nack lastNack;
  /** key → version the client ACKed: what it is known to run (make-before-break, admin, CSDS). */
  VersionMap acked = VersionMap.EMPTY;
  /**
   * key → version of the resources in the latest response; in flight, ACKed or NACKed. Null after
   * a heartbeat, which carries no new version: its ACK changes nothing the client runs.
   */
  VersionMap lastResponse = VersionMap.EMPTY;
  /** The version map of the snapshot the latest response came from (what an ACK may share). */
  java.util.Map<String, String> lastSnapshot = java.util.Map.of();
  /** Keys the latest response removed (Delta removed_resources). */
  List<String> lastRemoved = List.of();
  /**
   * Who sends the responses (issue 21): every response and heartbeat carries it as
   * {@code control_plane}; null: the field is left out. The hub's constant, set by the stream.
   */
  io.envoyproxy.envoy.config.core.v3.ControlPlane controlPlane;
  /** ADS sequencing (see XdsStream): whether this type may respond now. */
  java.util.function.Predicate<ResourceType> gate = t -> true;
  /**
   * Told of every response's resources that are new to the client, and of the snapshot they came
   * from (warming, sequencing). Null: nobody needs to know.
   */
  java.util.function.BiConsumer<List<XdsResource>, TypeSnapshot> onSent;
  /** Removed resources still presented as present until routes stopped using them (ADS). */
  final java.util.Map<String, XdsResource> lingering = new java.util.HashMap<>();
  /** Names to resend on the client's next request even if unchanged (spec "Resource warming"). */
  final NameSet resendOnAsk = new NameSet();
  /**
   * Names changed (by config or subscription) since the last response; all with dirtyAll. Starts
   * as the change's own set, which every stream it concerns shares, and copies on a write.
   */
  final NameSet dirty = new NameSet();
  boolean dirtyAll;
  /**
   * Why a name this stream asks for is absent, as a per-resource error (TP3 {@code
   * resource_errors}): the stream's rule ({@code XdsStream.absence}); the default knows nothing
   * but "does not exist".
   */
  java.util.function.Function<String, Status> absence;
  /** Per-resource errors said on this stream, name → error: each is said once, until it changes. */
  private final java.util.Map<String, Status> errorsSaid = new java.util.HashMap<>();
  /**
   * Per-resource errors not sent yet, in name order: the next responses carry them, at most
   * {@link #MAX_ERRORS_PER_RESPONSE} each.
   */
  private final java.util.TreeMap<String, ResourceError> errors = new java.util.TreeMap<>();

  TypeState(ResourceType type, ClientFeatures features, Clock clock, Sharing sharing) {
    this.type = type;
    this.features = features;
    this.clock = clock;
    this.sharing = sharing;
    this.subscription = new Subscription(sharing);
    this.absence = n -> notFound(type, n, "does not exist");
  }

  /** A NOT_FOUND per-resource error for {@code name}, saying {@code why}. */
  static Status notFound(ResourceType type, String name, String why) {
    return Status.newBuilder().setCode(NOT_FOUND)
        .setMessage(type.abbreviation() + " resource '" + ClientText.clip(name) + "' " + why)
        .build();
  }

  /**
   * Settles the in-flight response if {@code nonce} answers it. Spec "ACK and NACK semantics
   * summary": a NACK is told apart by error_detail. Returns true if the request answered the
   * response in flight.
   */
  boolean settle(String nonce, boolean hasError, Status error, String clientVersion,
      String sentVersion, String nodeId, List<Outcome> out) {
    if (nonce.isEmpty() || !awaitingAck || !nonce.equals(lastNonce)) {
      return false;
    }
    awaitingAck = false;
    if (hasError) {
      // What was sent stays recorded, so it is not resent; the client still runs what it ACKed.
      lastNack = new Nack(nodeId, type, sentVersion, clientVersion, nonce, error.getCode(),
          Nack.bound(error.getMessage()), clock.instant());
      out.add(new Outcome.Nacked(lastNack));
    } else {
      ackedVersion = sentVersion;
      if (lastResponse != null) {
        acked = replacesState() ? lastResponse
            : acked.merge(lastResponse, lastRemoved, lastSnapshot);
      }
      out.add(new Outcome.Ack(type, sentVersion, nonce));
    }
    return true;
  }

  /** Whether a response replaces the client's whole state of the type (SotW Listener/Cluster). */
  boolean replacesState() {
    return false;
  }

  /**
   * The one rule of per-resource errors (TP3, {@code resource_errors}): a name the client asks
   * for that is absent for this stream is reported with why ({@link #absence}: NOT_FOUND, a
   * withheld Secret alike) when that is first known, and again only if
   * the reason changes. Called where each variant decides that a requested name does not exist.
   */
  final void absent(String name) {
    Status e = absence.apply(name);
    if (!e.equals(errorsSaid.put(name, e))) {
      errors.put(name, ResourceError.newBuilder()
          .setResourceName(ResourceName.newBuilder().setName(name)).setErrorDetail(e).build());
    }
  }

  /**
   * The client already knows why {@code name} is absent (a reconnect at the version of a view
   * whose response said so): recorded as said, not said again.
   */
  final void absenceKnown(String name) {
    errorsSaid.put(name, absence.apply(name));
  }

  /** {@code name} exists for this stream: an error said about it no longer holds. */
  final void present(String name) {
    if (!errorsSaid.isEmpty()) {
      errorsSaid.remove(name);
      errors.remove(name);
    }
  }

  /** Forgets the errors said about names that exist in {@code snapshot} (a whole-type answer). */
  final void presentAll(TypeSnapshot snapshot) {
    if (!errorsSaid.isEmpty()) {
      errorsSaid.keySet().removeIf(n -> snapshot.resolve(n) != null);
      errors.keySet().removeIf(n -> snapshot.resolve(n) != null);
    }
  }

  /**
   * The most per-resource errors one response carries, and the most bytes of names they may
   * hold (at least one error is always said). A client that names 100,000 resources that do not
   * exist is told of a hundred at a time, not sent 100,000 errors in one response.
   */
  static final int MAX_ERRORS_PER_RESPONSE = 100;
  static final int MAX_ERROR_NAME_BYTES = 64 * 1024;

  /**
   * The per-resource errors for the next response: the first {@link #MAX_ERRORS_PER_RESPONSE}
   * not yet sent, in name order, within {@link #MAX_ERROR_NAME_BYTES} of names. The rest wait for
   * the responses that follow (see {@link #respondIfIdle}).
   */
  final List<ResourceError> takeErrors() {
    if (errors.isEmpty()) {
      return List.of();
    }
    List<ResourceError> out = new java.util.ArrayList<>(Math.min(errors.size(),
        MAX_ERRORS_PER_RESPONSE));
    long bytes = 0;
    while (!errors.isEmpty() && out.size() < MAX_ERRORS_PER_RESPONSE) {
      bytes += errors.firstKey().length();
      if (!out.isEmpty() && bytes > MAX_ERROR_NAME_BYTES) {
        break;
      }
      out.add(errors.pollFirstEntry().getValue());
    }
    return out;
  }

  /** Whether per-resource errors wait to be said: a response is owed for them alone. */
  final boolean errorsPending() {
    return !errors.isEmpty();
  }

  /** The client no longer asks for these names: an error about one is said anew if it asks again. */
  final void unasked(java.util.Collection<String> names) {
    if (!errorsSaid.isEmpty() && !names.isEmpty()) {
      errorsSaid.keySet().removeAll(names);
      errors.keySet().removeAll(names);
    }
  }

  /** The client dropped interest in these names: it no longer runs them. */
  final void dropped(java.util.Collection<String> keys) {
    if (!keys.isEmpty()) {
      VersionMap.Editor edit = acked.edit();
      keys.forEach(edit::remove);
      acked = edit.commit();
    }
  }

  /** The config changed; {@code changed} names differ (null: anything may have). */
  final void onSnapshot(TypeSnapshot snapshot, Set<String> changed, Supplier<String> nonces,
      List<Outcome> out) {
    if (!started) {
      return;
    }
    if (changed == null || replacesState()) {
      dirtyAll = true; // a full-state answer is the whole subscribed state: names do not matter
    } else {
      markDirty(changed);
    }
    respondIfIdle(snapshot, nonces, out);
  }

  /** DESIGN "Flow control": at most one un-ACKed response per type; meanwhile changes coalesce. */
  final void respondIfIdle(TypeSnapshot snapshot, Supplier<String> nonces, List<Outcome> out) {
    if (!awaitingAck && (dirtyAll || !dirty.isEmpty() || owesResponse() || errorsPending())
        && gate.test(type)) {
      respond(withLingering(snapshot), nonces, out);
    }
  }

  /** No response in flight and nothing waiting to be sent. */
  final boolean settled() {
    return !awaitingAck && !dirtyAll && dirty.isEmpty() && !owesResponse();
  }

  /** The snapshot as this client should see it: plus resources still lingering. */
  final TypeSnapshot withLingering(TypeSnapshot snapshot) {
    if (lingering.isEmpty()) {
      return snapshot;
    }
    List<XdsResource> all = new java.util.ArrayList<>(snapshot.resources().values());
    for (XdsResource r : lingering.values()) {
      if (snapshot.get(r.name()) == null) {
        all.add(r);
      }
    }
    return TypeSnapshot.of(all);
  }

  /**
   * Spec "Resource warming": a client warming a cluster (listener) waits for its endpoints (routes)
   * and asks again; answer the ask with them even if unchanged.
   */
  final void applyResendOnAsk() {
    if (resendOnAsk.isEmpty()) {
      return;
    }
    if (resendOnAsk.size() >= clientHolds().size() && clientHolds().allKeys(resendOnAsk::contains)) {
      // Every resource the client holds is to be resent (every cluster changed, say): forget
      // them at once; the answer is then the whole subscribed state, shared when it can be.
      resendOnAsk.clear();
      forgetAll();
      dirtyAll = true;
      return;
    }
    List<String> names = new java.util.ArrayList<>();
    for (String n : resendOnAsk) { // read-only iteration
      if (subscription.covers(n)) {
        names.add(n);
      }
    }
    resendOnAsk.clear();
    forget(names); // one edit for all: a change of every cluster asks for every endpoint set
    markDirty(names);
  }

  /** Forgets that the client holds these keys, so that they are sent again. */
  abstract void forget(java.util.Collection<String> keys);

  /** Forgets everything the client holds of this type, so that all of it is sent again. */
  abstract void forgetAll();

  /** Whether a response is due even without changes (e.g. a full-state type's first answer). */
  boolean owesResponse() {
    return false;
  }

  /** Builds and emits the response, if there is anything to say. Clears the dirty state. */
  abstract void respond(TypeSnapshot snapshot, Supplier<String> nonces, List<Outcome> out);

  /** Whether this client gets TTLs (and so heartbeats) on this variant. */
  abstract boolean ttlEnabled();

  /** Records that the client was just sent these resources: no heartbeat is due for a while. */
  final void sentNow(Iterable<XdsResource> resources) {
    if (!resendOnAsk.isEmpty()) {
      // Sent after its cluster (listener) changed: the warming client has what it waits for.
      for (XdsResource r : resources) {
        resendOnAsk.remove(r.name());
      }
    }
    if (!ttlEnabled()) {
      return;
    }
    java.time.Instant now = clock.instant();
    for (XdsResource r : resources) {
      if (r.ttl() != null) {
        ttlSentAt.put(r.name(), now);
      } else {
        ttlSentAt.remove(r.name());
      }
    }
  }

  /**
   * A new stream's client proved it holds these (name, version) pairs (a reconnect: SotW
   * version_info, Delta initial_resource_versions): it runs them, having ACKed them on its last
   * stream, and is sent none of them again. Their TTLs run on from whenever the old stream,
   * perhaps another replica's, last refreshed them, which this one cannot know: those with a TTL
   * are heartbeated at the next tick (spec "TTL"; issue 21), then at the usual interval.
   */
  final void resumed(VersionMap holds, TypeSnapshot snapshot) {
    acked = holds;
    if (!ttlEnabled()) {
      return;
    }
    holds.forEach((name, version) -> {
      XdsResource r = snapshot.get(name);
      if (r != null && r.ttl() != null && r.version().equals(version)) {
        ttlSentAt.put(name, java.time.Instant.MIN); // due now
      }
    });
  }

  /**
   * Time passed: heartbeat the TTL resources the client holds whose interval is up (spec "TTL").
   * Heartbeats are not updates: versions stay, and a resource just sent is skipped.
   */
  final void onTick(TypeSnapshot snapshot, HeartbeatPolicy policy, Supplier<String> nonces,
      List<Outcome> out) {
    if (!started || awaitingAck || ttlSentAt.isEmpty()) {
      return;
    }
    java.time.Instant now = clock.instant();
    VersionMap holds = clientHolds();
    List<XdsResource> due = new java.util.ArrayList<>();
    for (java.util.Iterator<java.util.Map.Entry<String, java.time.Instant>> it =
        ttlSentAt.entrySet().iterator(); it.hasNext(); ) {
      java.util.Map.Entry<String, java.time.Instant> e = it.next();
      XdsResource r = snapshot.get(e.getKey());
      String held = holds.get(e.getKey());
      if (held == null && r != null && !r.aliases().isEmpty()) {
        for (String alias : r.aliases()) { // VHDS: held by an alias it was subscribed by
          if (r.version().equals(holds.get(alias))) {
            held = r.version();
          }
        }
      }
      if (r == null || r.ttl() == null || !r.version().equals(held)) {
        it.remove(); // gone, no TTL any more, or not what the client holds: nothing to keep alive
      } else if (!now.isBefore(e.getValue().plus(policy.interval(r.ttl())))) {
        due.add(r);
        e.setValue(now);
      }
    }
    if (!due.isEmpty()) {
      due.sort(java.util.Comparator.comparing(XdsResource::name));
      heartbeat(due, nonces, out);
    }
  }

  /** What the client holds, key → version. */
  abstract VersionMap clientHolds();

  /** Emits one response that only refreshes the TTLs of {@code due}. */
  abstract void heartbeat(List<XdsResource> due, Supplier<String> nonces, List<Outcome> out);

  /**
   * Records a response before it goes out: what it carries, for the ACK to settle ({@code carried}
   * key → version, {@code removed} keys); which of its resources are new to the client. Returns
   * its nonce.
   */
  final String record(List<XdsResource> fresh, VersionMap carried, List<String> removed,
      TypeSnapshot snapshot, Supplier<String> nonces) {
    lastResponse = carried;
    lastRemoved = removed;
    lastSnapshot = snapshot.versionMap();
    if (onSent != null && !fresh.isEmpty()) {
      onSent.accept(fresh, snapshot);
    }
    sentNow(fresh);
    return mint(nonces);
  }

  /** name → version of {@code resources}: the snapshot's own map when they are all of it. */
  static VersionMap versionsOf(List<XdsResource> resources, TypeSnapshot snapshot) {
    if (resources == snapshot.list()) {
      return VersionMap.shared(snapshot.versionMap());
    }
    VersionMap.Editor e = VersionMap.EMPTY.edit();
    for (XdsResource r : resources) {
      e.put(r.name(), r.version());
    }
    return e.commit(snapshot.versionMap());
  }

  /** Records a heartbeat (spec "TTL"): no new version, nothing for its ACK to change. */
  final String recordHeartbeat(Supplier<String> nonces) {
    lastResponse = null;
    lastRemoved = List.of();
    return mint(nonces);
  }

  /** Marks a response as sent under a fresh nonce. */
  final String mint(Supplier<String> nonces) {
    String nonce = nonces.get();
    lastNonce = nonce;
    awaitingAck = true;
    return nonce;
  }

  final void markDirty(java.util.Collection<String> names) {
    if (names instanceof Set<String> changed) {
      dirty.addShared(changed); // a config change's names: shared until this stream adds one
    } else {
      dirty.addAll(names);
    }
  }

  final void clearDirty() {
    dirty.clear(); // drops the set: a large change's table is not kept
    dirtyAll = false;
  }

  /** The last version_info / system_version_info sent. */
  abstract String sentVersion();

  /** Per resource, what the client was sent or holds. */
  abstract java.util.Map<String, String> resourceVersions();

  String pendingNonce() {
    return awaitingAck ? lastNonce : null;
  }
}
