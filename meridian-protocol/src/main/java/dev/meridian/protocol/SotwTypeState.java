package dev.meridian.protocol;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * State-of-the-World state of one resource type on one stream. Not thread-safe: the owning stream
 * mutates it on its own serial executor.
 */
final class SotwTypeState extends TypeState {
  /** name → version of what this client was last sent (or proved to hold on reconnect). */
  private VersionMap sent = VersionMap.EMPTY;
  private String sentVersionInfo = "";
  /** A full-state type owes the client a response even if nothing changed (first request, new names). */
  private boolean owesResponse;

  SotwTypeState(ResourceType type, ClientFeatures features, java.time.Clock clock,
      Sharing sharing) {
    super(type, features, clock, sharing);
  }

  @Override
  boolean owesResponse() {
    return owesResponse;
  }

  @Override
  boolean ttlEnabled() {
    return features.ttlInSotw();
  }

  @Override
  boolean replacesState() {
    return type.fullStateInSotw();
  }

  @Override
  void forget(Collection<String> keys) {
    if (keys.isEmpty()) {
      return;
    }
    VersionMap.Editor edit = sent.edit();
    keys.forEach(edit::remove);
    sent = edit.commit();
    if (type.fullStateInSotw()) {
      owesResponse = true;
    }
  }

  @Override
  void forgetAll() {
    sent = VersionMap.EMPTY;
    if (type.fullStateInSotw()) {
      owesResponse = true;
    }
  }

  @Override
  VersionMap clientHolds() {
    return sent;
  }

  @Override
  void heartbeat(List<XdsResource> due, Supplier<String> nonces, List<Outcome> out) {
    DiscoveryResponse.Builder b = DiscoveryResponse.newBuilder()
        .setVersionInfo(sentVersionInfo) // a heartbeat is not an update: the version stays
        .setTypeUrl(type.typeUrl());
    for (XdsResource r : due) {
      b.addResources(Any.pack(r.heartbeat()));
    }
    out.add(new Outcome.Send(type, b.setNonce(mint(nonces)).build()));
  }

  /** A request for this type. {@code nonces} mints the nonce of any response sent. */
  void onRequest(DiscoveryRequest req, TypeSnapshot snapshot, String nodeId,
      Supplier<String> nonces, List<Outcome> out) {
    String nonce = req.getResponseNonce();
    // Spec "Resource updates": no response for a request with a stale nonce; it is superseded.
    if (!nonce.isEmpty() && !nonce.equals(lastNonce)) {
      out.add(new Outcome.Ignored(type, "stale nonce " + nonce + " (latest " + lastNonce + ")"));
      return;
    }
    boolean first = !started;
    started = true;
    applyResendOnAsk();
    // A NACK leaves the rejected resources in `sent`: a NACKed version is never resent.
    settle(nonce, req.hasErrorDetail(), req.getErrorDetail(), req.getVersionInfo(), sentVersionInfo,
        nodeId, out);
    Subscription.Change change = subscription.replace(req.getResourceNamesList());
    // Spec "How the client specifies what resources to return": newly requested names are resent
    // even if sent before; dropped names are forgotten so that a later re-request resends them.
    VersionMap.Editor edit = sent.edit();
    List<String> gone = new ArrayList<>();
    for (String n : change.removed()) {
      if (!subscription.covers(n)) {
        edit.remove(n);
        gone.add(n);
      }
    }
    if (change.wildcardRemoved()) {
      sent.forEach((n, v) -> {
        if (!subscription.covers(n)) {
          edit.remove(n);
          gone.add(n);
        }
      });
    }
    if (!sent.isEmpty()) {
      for (String n : change.added()) {
        edit.remove(n);
      }
    }
    sent = edit.commit();
    dropped(gone);
    if (type.fullStateInSotw() && (!change.added().isEmpty() || change.wildcardAdded())) {
      owesResponse = true; // the answer tells the client which of them exist
    }
    if (first) {
      String clientVersion = req.getVersionInfo();
      if (!clientVersion.isEmpty() && clientVersion.equals(versionInfo(snapshot))) {
        // Reconnect (spec "Versioning and Node Identifier"): the client already holds exactly this
        // view under the same subscription, so nothing is resent.
        sent = view(snapshot);
        sentVersionInfo = clientVersion;
        ackedVersion = clientVersion;
        acked = sent;
        owesResponse = false;
      } else if (type.fullStateInSotw()) {
        owesResponse = true;
      }
      dirtyAll = true;
    } else if (!change.isEmpty()) {
      dirtyAll = true;
    }
    respondIfIdle(snapshot, nonces, out);
  }

  @Override
  void respond(TypeSnapshot snapshot, Supplier<String> nonces, List<Outcome> out) {
    List<XdsResource> resources = new ArrayList<>();
    List<Any> bodies = null; // shared, when the response is a whole type
    if (type.fullStateInSotw()) {
      // Spec "Grouping Resources into Responses": the complete subscribed state, every time.
      clearDirty();
      VersionMap view = view(snapshot);
      if (!owesResponse && sent.sameAs(view.toMap())) {
        return;
      }
      VersionMap before = sent;
      boolean whole = view.isShared(snapshot.versionMap());
      boolean list = !whole || ttlEnabled(); // a whole type goes out as the snapshot's own list
      if (!list && onSent != null && before.isEmpty()) {
        sentWhole(snapshot); // the whole type, all new to the client
      } else if (!list && onSent != null && before.sharedBase() != null) {
        // In sync with an earlier snapshot, as every client is after a reload: what changed is
        // the same for all of them, computed once.
        sentShared(sharing.changedFrom(snapshot, before.sharedBase()));
      } else if (list || onSent != null) {
        view.forEach((n, v) -> {
          XdsResource r = snapshot.get(n);
          if (list) {
            resources.add(r);
          }
          if (onSent != null && !v.equals(before.get(n))) {
            onSent.accept(r);
          }
        });
        resources.sort(java.util.Comparator.comparing(XdsResource::name));
      }
      if (whole) {
        bodies = snapshot.anys();
      }
      sent = view;
      lastResponse = view;
    } else if (dirtyAll && sent.isEmpty() && view(snapshot).isShared(snapshot.versionMap())) {
      // The first answer to a client that asks for the whole type (every EDS name, say): it is
      // the snapshot itself, shared, with no per-name bookkeeping.
      clearDirty();
      resources.addAll(snapshot.resources().values());
      sentWhole(snapshot);
      bodies = snapshot.anys();
      sent = VersionMap.shared(snapshot.versionMap());
      lastResponse = sent;
    } else {
      Collection<String> candidates = dirtyAll ? candidates(snapshot) : new ArrayList<>(dirty);
      clearDirty();
      VersionMap.Editor edit = sent.edit();
      VersionMap.Editor carried = VersionMap.EMPTY.edit();
      for (String n : candidates) {
        XdsResource r = subscription.covers(n) ? snapshot.get(n) : null;
        if (r == null) {
          // Deleted: SotW cannot say so for this type (spec "Deleting Resources"); forget it so
          // that a reappearance is sent.
          edit.remove(n);
        } else if (!r.version().equals(sent.get(n))) {
          edit.put(n, r.version());
          carried.put(n, r.version());
          resources.add(r);
          if (onSent != null) {
            onSent.accept(r);
          }
        }
      }
      sent = edit.commit(snapshot.versionMap());
      if (resources.isEmpty()) {
        return;
      }
      // In name order: the candidates come in a hash order, and equal states send equal bytes.
      resources.sort(java.util.Comparator.comparing(XdsResource::name));
      lastResponse = carried.commit(snapshot.versionMap());
    }
    owesResponse = false;
    sentVersionInfo = versionInfo(snapshot);
    boolean wrap = features.ttlInSotw();
    DiscoveryResponse.Builder b = DiscoveryResponse.newBuilder()
        .setVersionInfo(sentVersionInfo)
        .setTypeUrl(type.typeUrl())
        .setNonce(mint(nonces));
    if (bodies != null && !(wrap && hasTtl(resources))) {
      b.addAllResources(bodies);
    } else {
      for (XdsResource r : resources) {
        b.addResources(r.sotwAny(wrap));
      }
    }
    sentNow(resources);
    out.add(new Outcome.Send(type, b.build()));
  }

  private static boolean hasTtl(List<XdsResource> resources) {
    for (XdsResource r : resources) {
      if (r.ttl() != null) {
        return true;
      }
    }
    return false;
  }

  /**
   * The version_info of this client's view: the type's version in its group and what it
   * subscribes to. Equal versions mean the same content under the same subscription, which is what
   * makes skipping the resend on reconnect safe (spec "Versioning and Node Identifier").
   */
  private String versionInfo(TypeSnapshot snapshot) {
    TreeMap<String, String> parts = new TreeMap<>();
    parts.put("type", snapshot.version());
    parts.put("subscription", subscription.fingerprint());
    return Versions.ofView(parts);
  }

  /** Everything that could need sending: every subscribed name and every name sent before. */
  private Collection<String> candidates(TypeSnapshot snapshot) {
    Set<String> names = sent.keys();
    if (subscription.isWildcard()) {
      names.addAll(snapshot.resources().keySet());
    }
    names.addAll(subscription.names());
    return names;
  }

  /** The existing resources this subscription covers, as name → version. */
  private VersionMap view(TypeSnapshot snapshot) {
    Set<String> names = subscription.names();
    if (subscription.isWildcard() ? sharing.hasAll(snapshot, names)
        : sharing.hasExactly(snapshot, names)) {
      return VersionMap.shared(snapshot.versionMap()); // the whole type (O(1) for shared sets)
    }
    VersionMap.Editor view = VersionMap.EMPTY.edit();
    if (subscription.isWildcard()) {
      snapshot.resources().forEach((n, r) -> view.put(n, r.version()));
    }
    for (String n : subscription.names()) {
      XdsResource r = snapshot.get(n);
      if (r != null) {
        view.put(n, r.version());
      }
    }
    return view.commit(snapshot.versionMap());
  }

  // --- read-only views for status reporting ---

  @Override
  String sentVersion() {
    return sentVersionInfo;
  }

  @Override
  Map<String, String> resourceVersions() {
    return sent.toMap();
  }
}
