package dev.meridian.protocol;

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
  private static final String ABSENT = "";

  /** key → version the client holds (from responses and initial_resource_versions). */
  private VersionMap held = VersionMap.EMPTY;
  /** Keys the client must hear about even if nothing changed (wildcard-unsubscribe rule). */
  private final Set<String> mustAnswer = new HashSet<>();
  private String systemVersion = "";

  DeltaTypeState(ResourceType type, ClientFeatures features, Clock clock, Sharing sharing) {
    super(type, features, clock, sharing);
  }

  @Override
  boolean ttlEnabled() {
    return features.resourceTtl();
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
    for (XdsResource r : due) {
      b.addResources(r.heartbeat());
    }
    lastResponse = VersionMap.EMPTY;
    out.add(new Outcome.Send(type, b.setNonce(mint(nonces)).build()));
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
    if (first) {
      // Spec "Incremental xDS": on reconnect the client lists what it holds; only differences are sent.
      req.getInitialResourceVersionsMap().forEach(edit::put);
      dirtyAll = true;
    }
    Subscription.Change change = subscription.update(req.getResourceNamesSubscribeList(),
        req.getResourceNamesUnsubscribeList());
    // Spec "Subscribing to Resources": names the client already holds must still be sent.
    List<String> subscribe = req.getResourceNamesSubscribeList();
    if (!first && !held.isEmpty() && subscribe.size() >= held.size() && subscribe.size() >= 64
        && held.allKeys(sharing.request(subscribe).set::contains)) {
      // It asks again for everything it holds (a warming client re-subscribing all its
      // endpoints): forget all of it at once, as a warming ask does (applyResendOnAsk).
      forgetAll();
      edit = held.edit();
      dirtyAll = true;
      subscribe = List.of();
    }
    // (Read once: the generated getter builds a new empty map view on every call.)
    Map<String, String> initial = first ? req.getInitialResourceVersionsMap() : Map.of();
    for (String n : subscribe) {
      // ...except on a reconnect, where the client's initial_resource_versions say what it holds.
      if (!n.equals(Subscription.WILDCARD) && !initial.containsKey(n)) {
        if (held.containsKey(n)) {
          edit.remove(n);
        }
        if (!dirtyAll) { // dirtyAll already covers every subscribed name
          dirty.add(n);
        }
      }
    }
    dropped(change.removed());
    for (String n : change.removed()) {
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
    held = edit.commit();
    if (change.wildcardRemoved()) {
      // The client drops what only the wildcard gave it; forget it so that a resubscribe resends.
      VersionMap.Editor drop = held.edit();
      held.forEach((k, v) -> {
        if (!subscription.isExplicit(k)) {
          drop.remove(k);
        }
      });
      held = drop.commit();
    }
    respondIfIdle(snapshot, nonces, out);
  }

  @Override
  void respond(TypeSnapshot snapshot, Supplier<String> nonces, List<Outcome> out) {
    if (subscription.isWildcard() && subscription.names().isEmpty() && mustAnswer.isEmpty()) {
      respondWildcard(snapshot, nonces, out);
      return;
    }
    if (dirtyAll && held.isEmpty() && mustAnswer.isEmpty() && type != ResourceType.VIRTUAL_HOST
        && !subscription.names().isEmpty() && sharing.hasExactly(snapshot, subscription.names())) {
      // The first answer to a client that names every resource of the type (all EDS names, say):
      // the whole snapshot, shared, with no per-name bookkeeping.
      clearDirty();
      held = VersionMap.shared(snapshot.versionMap());
      java.util.Collection<XdsResource> all = snapshot.resources().values();
      sentWhole(snapshot);
      systemVersion = snapshot.version();
      lastResponse = held;
      sentNow(all);
      send(snapshot.wrapped(features.resourceTtl()), List.of(), nonces, out);
      return;
    }
    Set<String> candidates = new LinkedHashSet<>();
    if (dirtyAll) {
      candidates.addAll(held.keys());
      candidates.addAll(subscription.names());
      if (subscription.isWildcard()) {
        candidates.addAll(snapshot.resources().keySet());
      }
    }
    candidates.addAll(dirty);
    clearDirty();
    // Sorted by name: the candidates come in a hash order, and equal states send equal bytes.
    Map<String, Resource> resources = new java.util.TreeMap<>();
    List<XdsResource> bodies = new java.util.ArrayList<>();
    Set<String> removed = new java.util.TreeSet<>();
    VersionMap.Editor sets = VersionMap.EMPTY.edit();
    VersionMap.Editor holdsNow = held.edit();
    for (String key : candidates) {
      boolean explicit = subscription.isExplicit(key);
      XdsResource r = explicit ? snapshot.resolve(key)
          : subscription.isWildcard() ? snapshot.get(key) : null;
      String holds = held.get(key);
      boolean answer = mustAnswer.remove(key);
      if (r != null) {
        if (!r.version().equals(holds)) {
          // One entry per name, aliases included; the TTL only for clients that support it.
          if (resources.putIfAbsent(r.name(), r.wrapped(features.resourceTtl())) == null) {
            bodies.add(r);
            if (onSent != null) {
              onSent.accept(r);
            }
          }
          holdsNow.put(key, r.version());
          sets.put(key, r.version());
        }
      } else if (explicit) {
        // Spec "Knowing When a Requested Resource Does Not Exist": say so promptly, once.
        if (!ABSENT.equals(holds)) {
          if (type == ResourceType.VIRTUAL_HOST) {
            // An unresolvable VHDS alias is answered with a body-less Resource naming the alias.
            resources.putIfAbsent(key, Resource.newBuilder().setName(key).addAliases(key).build());
          } else {
            removed.add(key);
          }
          holdsNow.put(key, ABSENT);
          sets.put(key, ABSENT);
        }
      } else if ((holds != null && !holds.equals(ABSENT)) || answer) {
        // Deleted, or no longer covered: every stream that had it is told.
        removed.add(key);
        holdsNow.remove(key);
        sets.put(key, ABSENT);
      }
    }
    held = holdsNow.commit(snapshot.versionMap());
    removed.removeAll(resources.keySet()); // never a name in both lists
    if (resources.isEmpty() && removed.isEmpty()) {
      return;
    }
    systemVersion = snapshot.version();
    lastResponse = sets.commit(snapshot.versionMap());
    sentNow(bodies);
    send(resources.values(), removed, nonces, out);
  }

  /** Emits a response of {@code systemVersion} with a fresh nonce. */
  private void send(java.util.Collection<Resource> resources, java.util.Collection<String> removed,
      Supplier<String> nonces, List<Outcome> out) {
    out.add(new Outcome.Send(type, DeltaDiscoveryResponse.newBuilder()
        .setSystemVersionInfo(systemVersion)
        .setTypeUrl(type.typeUrl())
        .setNonce(mint(nonces))
        .addAllResources(resources)
        .addAllRemovedResources(removed)
        .build()));
  }

  /**
   * The common case at fleet scale, a pure wildcard client (Envoy's CDS and LDS): the same rules as
   * {@link #respond}, without per-key bookkeeping. When the client ends up holding exactly the
   * snapshot, it shares the snapshot's version map and its list of wrapped resources.
   */
  private void respondWildcard(TypeSnapshot snapshot, Supplier<String> nonces, List<Outcome> out) {
    boolean all = dirtyAll;
    java.util.Collection<String> names = all ? snapshot.resources().keySet() : new ArrayList<>(dirty);
    clearDirty();
    List<XdsResource> bodies = new ArrayList<>();
    List<String> removed = new ArrayList<>();
    Map<String, String> base = held.sharedBase();
    if (base != null && names.size() >= 64 && !sharing.containsVersion(held, ABSENT)) {
      // In sync with an earlier snapshot (every wildcard client after a reload): what to send
      // is the same for all of them, computed once.
      bodies.addAll(sharing.changedFrom(snapshot, base));
      removed.addAll(sharing.removedFrom(snapshot, base));
      names = List.of();
      all = false;
    }
    for (String n : names) {
      XdsResource r = snapshot.get(n);
      String holds = held.get(n);
      if (r == null) {
        if (holds != null && !holds.equals(ABSENT)) {
          removed.add(n); // deleted: every stream that had it is told
        }
      } else if (!r.version().equals(holds)) {
        bodies.add(r);
      }
    }
    if (all) {
      held.forEach((n, v) -> {
        if (snapshot.get(n) == null && !v.equals(ABSENT)) {
          removed.add(n);
        }
      });
    }
    if (bodies.isEmpty() && removed.isEmpty()) {
      return;
    }
    removed.sort(null); // collected in a hash order; equal states send equal bytes
    boolean ttl = features.resourceTtl();
    List<Resource> resources;
    VersionMap carried;
    boolean whole = bodies.size() == snapshot.size();
    if (whole) {
      resources = snapshot.wrapped(ttl);
      held = VersionMap.shared(snapshot.versionMap());
      carried = held;
    } else {
      bodies.sort(java.util.Comparator.comparing(XdsResource::name));
      resources = new ArrayList<>(bodies.size());
      VersionMap.Editor h = held.edit();
      VersionMap.Editor c = VersionMap.EMPTY.edit();
      for (XdsResource r : bodies) {
        resources.add(r.wrapped(ttl));
        h.put(r.name(), r.version());
        c.put(r.name(), r.version());
      }
      for (String n : removed) {
        h.remove(n);
        c.put(n, ABSENT);
      }
      held = h.commit(snapshot.versionMap());
      carried = c.commit();
    }
    if (whole && !removed.isEmpty()) {
      VersionMap.Editor c = carried.edit();
      removed.forEach(n -> c.put(n, ABSENT));
      carried = c.commit();
    }
    if (whole) {
      sentWhole(snapshot);
    } else if (onSent != null) {
      bodies.forEach(onSent);
    }
    systemVersion = snapshot.version();
    lastResponse = carried;
    sentNow(bodies);
    send(resources, removed, nonces, out);
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
