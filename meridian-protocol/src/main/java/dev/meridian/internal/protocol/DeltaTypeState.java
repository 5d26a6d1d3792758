package dev.meridian.internal.protocol;

import dev.meridian.xds.ResourceType;

import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Incremental (Delta) state of one resource type on one stream: what the client holds, resource by
 * resource, so that only changes are sent. Keys are the names (or, for VHDS, aliases) the client
 * subscribed by. Not thread-safe: the owning stream uses it from one serial executor.
 */
final class DeltaTypeState extends TypeState {
  /** Held version meaning "the client was told this does not exist". */
  private static final String ABSENT = Diff.NOT_HELD;

  /** key → version the client holds (from responses and initial_resource_versions). */
  private VersionMap held = VersionMap.EMPTY;
  /** Keys the client must hear about even if nothing changed (wildcard-unsubscribe rule). */
  private final Set<String> mustAnswer = new HashSet<>();
  private String systemVersion = "";
  /** A new wildcard that holds nothing is answered even when the type is empty. */
  private boolean owesWildcardAnswer;

  DeltaTypeState(ResourceType type, ClientFeatures features, Clock clock, Sharing sharing) {
    super(type, features, clock, sharing);
  }

  @Override
  boolean ttlEnabled() {
    return features.resourceTtl();
  }

  @Override
  boolean owesResponse() {
    return owesWildcardAnswer;
  }

  @Override
  void forget(java.util.Collection<String> keys) {
    if (!keys.isEmpty()) {
      VersionMap.Editor edit = held.edit();
      keys.forEach(edit::remove);
      held = edit.commit();
    }
  }

  @Override
  void forgetAll() {
    held = VersionMap.EMPTY;
  }

  @Override
  VersionMap clientHolds() {
    return held;
  }

  @Override
  void heartbeat(List<XdsResource> due, Supplier<String> nonces, List<Outcome> out) {
    DeltaDiscoveryResponse.Builder b = DeltaDiscoveryResponse.newBuilder()
        .setSystemVersionInfo(systemVersion)
        .setTypeUrl(type.typeUrl());
    if (controlPlane != null) {
      b.setControlPlane(controlPlane);
    }
    for (XdsResource r : due) {
      b.addResources(r.heartbeat());
    }
    out.add(new Outcome.Send(type, b.setNonce(recordHeartbeat(nonces)).build()));
  }

  void onRequest(DeltaDiscoveryRequest req, TypeSnapshot snapshot, String nodeId,
      Supplier<String> nonces, List<Outcome> out) {
    boolean first = !started;
    started = true;
    applyResendOnAsk();
    String nonce = req.getResponseNonce();
    // Spec "Incremental xDS": ACK/NACK are paired to a response by response_nonce. A request with an
    // unknown or stale nonce is not an ACK, but its subscription changes still count.
    if (!settle(nonce, req.hasErrorDetail(), req.getErrorDetail(), "", systemVersion, nodeId,
        out) && !nonce.isEmpty()) {
      out.add(new Outcome.Ignored(type, "nonce " + nonce + " answers no response in flight"
          + " (latest " + lastNonce + "); subscription changes applied"));
    }
    VersionMap.Editor edit = held.edit();
    // (Read once: the generated getter builds a new empty map view on every call.)
    Map<String, String> initial = first ? initialVersions(req) : Map.of();
    if (first) {
      // Spec "Incremental xDS": on reconnect the client lists what it holds; only differences are sent.
      initial.forEach(edit::put);
      if (!initial.isEmpty()) {
        VersionMap.Editor holds = VersionMap.EMPTY.edit();
        initial.forEach(holds::put);
        resumed(holds.commit(), snapshot);
      }
      dirtyAll = true;
    }
    // TP1 "Normalization": xdstp names are matched, held and answered in canonical form.
    List<String> subscribe = XdstpName.canonicalize(req.getResourceNamesSubscribeList());
    Subscription.Change change = subscription.update(subscribe,
        XdstpName.canonicalize(req.getResourceNamesUnsubscribeList()));
    // Spec "Subscribing to Resources": names the client already holds must still be sent.
    if (!first && !held.isEmpty() && subscribe.size() >= held.size() && subscribe.size() >= 64
        && held.allKeys(sharing.request(subscribe).set::contains)) {
      // It asks again for everything it holds (a warming client re-subscribing all its
      // endpoints): forget all of it at once, as a warming ask does (applyResendOnAsk).
      forgetAll();
      edit = held.edit();
      dirtyAll = true;
      subscribe = List.of();
    }
    for (String n : subscribe) {
      // ...except on a reconnect, where the client's initial_resource_versions say what it holds.
      if (!dirtyAll && XdstpName.isGlob(n)) {
        dirtyAll = true; // TP1 "Glob": a new collection: every member it holds is to be sent
      } else if (!n.equals(Subscription.WILDCARD) && !initial.containsKey(n)) {
        if (held.containsKey(n)) {
          edit.remove(n);
        }
        if (!dirtyAll) { // dirtyAll already covers every subscribed name
          dirty.add(n);
        }
      }
    }
    // TP1 "Glob": a name unsubscribed that a subscribed collection still covers stays held, as a
    // member: its changes and its removal are still the client's.
    List<String> removed = change.removed().stream()
        .filter(n -> !subscription.inCollection(n)).toList();
    dropped(removed);
    unasked(change.removed());
    boolean collectionDropped = false;
    for (String n : removed) {
      collectionDropped |= XdstpName.isGlob(n);
      edit.remove(n);
      if (subscription.isWildcard()) {
        // Spec: a wildcard client that drops a specific name cannot tell whether the wildcard
        // still covers it; answer with the resource or with its removal.
        mustAnswer.add(n);
        dirty.add(n);
      }
    }
    if (change.wildcardAdded()) {
      dirtyAll = true;
    }
    if ((change.wildcardAdded() || first) && subscription.isWildcard() && initial.isEmpty()) {
      // Spec "How the client specifies what resources to return": the empty set answers a
      // wildcard too, so that a client can tell "none" from "no answer". A client resuming with
      // initial_resource_versions is sent only what differs (nothing, when nothing does).
      owesWildcardAnswer = true;
    }
    held = edit.commit();
    if (change.wildcardRemoved() || collectionDropped) {
      // The client drops what only the wildcard (or a glob collection, TP1 "Glob") gave it;
      // forget it so that a resubscribe resends. An unsubscribe needs no answer.
      VersionMap.Editor drop = held.edit();
      held.forEach((k, v) -> {
        if (!subscription.covers(k)) {
          drop.remove(k);
        }
      });
      held = drop.commit();
      // Nor is an answer owed about a name it dropped while the wildcard still covered it: it now
      // holds nothing of it. (Left pending, it went out with whatever next woke this type, a
      // change that no longer concerns the stream.)
      mustAnswer.removeIf(n -> !subscription.covers(n));
    }
    respondIfIdle(snapshot, nonces, out);
  }

  /**
   * Spec "Incremental xDS": each resource whose version the client lacks is sent, and each it
   * holds that is gone or no longer covered is removed. One path: work out the diff, then send.
   */
  @Override
  void respond(TypeSnapshot snapshot, Supplier<String> nonces, List<Outcome> out) {
    Diff diff;
    if ((dirtyAll || sharing.prefersWhole(held, dirty.size())) && seesWhole(snapshot)) {
      diff = sharing.toWhole(held, snapshot);
      held = VersionMap.shared(snapshot.versionMap()); // it now holds exactly the type
      presentAll(snapshot); // every name it asks for exists
    } else {
      diff = diff(dirtyAll ? candidates(snapshot) : dirty, snapshot);
    }
    clearDirty();
    List<io.envoyproxy.envoy.service.discovery.v3.ResourceError> errors = takeErrors();
    if (diff.isEmpty() && errors.isEmpty() && !owesWildcardAnswer) {
      return;
    }
    owesWildcardAnswer = false;
    systemVersion = snapshot.version();
    String nonce = record(diff.changed(), versionsOf(diff.changed(), snapshot), diff.gone(),
        snapshot, nonces);
    boolean ttl = features.resourceTtl();
    DeltaDiscoveryResponse.Builder b = DeltaDiscoveryResponse.newBuilder()
        .setSystemVersionInfo(systemVersion)
        .setTypeUrl(type.typeUrl())
        .setNonce(nonce);
    if (controlPlane != null) {
      b.setControlPlane(controlPlane);
    }
    if (diff.changesWhole(snapshot)) {
      b.mergeFrom(snapshot.deltaWhole(ttl)); // the whole type: one list for every client, not copied
    } else {
      for (XdsResource r : diff.changed()) {
        b.addResources(r.wrapped(ttl));
      }
    }
    for (String key : diff.gone()) {
      if (type == ResourceType.VIRTUAL_HOST && subscription.isExplicit(key)) {
        // An unresolvable VHDS alias is answered with a body-less Resource naming the alias.
        b.addResources(Resource.newBuilder().setName(key).addAliases(key));
      } else {
        b.addRemovedResources(key);
      }
    }
    // TP3: why each requested name is absent, with its removal (older clients read only that).
    b.addAllResourceErrors(errors);
    out.add(new Outcome.Send(type, b.build()));
  }

  /**
   * Whether the client should hold exactly every resource of the type: a wildcard (with no
   * explicit name that does not exist), or names that are exactly the type's.
   */
  private boolean seesWhole(TypeSnapshot snapshot) {
    if (!mustAnswer.isEmpty() || type == ResourceType.VIRTUAL_HOST) {
      return false;
    }
    Set<String> names = subscription.names();
    return subscription.isWildcard() ? names.isEmpty() || sharing.hasAll(snapshot, names)
        : !names.isEmpty() && sharing.hasExactly(snapshot, names);
  }

  /** Every key that could need an answer: all the client holds or subscribes to. */
  private Set<String> candidates(TypeSnapshot snapshot) {
    Set<String> keys = held.keys();
    keys.addAll(subscription.names());
    if (subscription.isWildcard()) {
      keys.addAll(snapshot.resources().keySet());
    } else {
      for (String glob : subscription.globs()) {
        keys.addAll(members(glob, snapshot));
      }
    }
    return keys;
  }

  /** The diff among {@code keys}, applied to {@link #held}. */
  private Diff diff(Iterable<String> keys, TypeSnapshot snapshot) {
    Map<String, XdsResource> changed = new java.util.TreeMap<>(); // one entry per name, aliases too
    Set<String> gone = new java.util.TreeSet<>();
    VersionMap.Editor holds = held.edit();
    for (String key : keys) {
      // A glob collection's own name is not a resource: only its members are answered.
      boolean explicit = subscription.isExplicitResource(key);
      XdsResource r = explicit ? snapshot.resolve(key)
          : subscription.coversUnnamed(key) ? snapshot.get(key) : null;
      String version = held.get(key);
      boolean mustSay = mustAnswer.remove(key);
      if (r != null) {
        present(key);
        if (!r.version().equals(version)) {
          changed.putIfAbsent(r.name(), r);
          holds.put(key, r.version());
        }
      } else if (explicit) {
        // Spec "Knowing When a Requested Resource Does Not Exist": say so promptly, once.
        if (!ABSENT.equals(version)) {
          gone.add(key);
          holds.put(key, ABSENT);
        }
        absent(key); // and why (TP3), said again only if that changes
      } else if ((version != null && !version.equals(ABSENT)) || mustSay) {
        // Deleted, or no longer covered: every stream that had it is told.
        gone.add(key);
        holds.remove(key);
      }
    }
    held = holds.commit(snapshot.versionMap());
    gone.removeAll(changed.keySet()); // never a name in both lists
    return new Diff(List.copyOf(changed.values()), List.copyOf(gone));
  }

  /**
   * The resources of {@code snapshot} in the glob collection {@code glob} (TP1 "Glob"): names
   * sort by prefix, so only the collection's directory is looked at.
   */
  static List<String> members(String glob, TypeSnapshot snapshot) {
    int query = glob.indexOf('?'); // (a context parameter's value may hold "/*")
    int star = (query < 0 ? glob : glob.substring(0, query)).lastIndexOf("/*");
    String prefix = glob.substring(0, star + 1);
    List<String> out = new ArrayList<>();
    for (String n : snapshot.resources().subMap(prefix, prefix + Character.MAX_VALUE).keySet()) {
      if (glob.equals(XdstpName.collectionOf(n))) {
        out.add(n);
      }
    }
    return out;
  }

  /** The client's initial_resource_versions, xdstp names in canonical form (TP1). */
  private static Map<String, String> initialVersions(DeltaDiscoveryRequest req) {
    Map<String, String> initial = req.getInitialResourceVersionsMap();
    for (String n : initial.keySet()) {
      if (XdstpName.isXdstp(n)) {
        Map<String, String> out = new HashMap<>();
        initial.forEach((k, v) -> out.put(XdstpName.canonicalize(k), v));
        return out;
      }
    }
    return initial;
  }

  @Override
  String sentVersion() {
    return systemVersion;
  }

  @Override
  Map<String, String> resourceVersions() {
    Map<String, String> holds = new HashMap<>(held.toMap());
    holds.values().removeIf(ABSENT::equals);
    return holds;
  }
}
