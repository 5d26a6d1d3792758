package dev.meridian.internal.protocol;

import dev.meridian.xds.ResourceType;

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
  /**
   * The client is owed a response even if nothing changed: a full-state type's first request or
   * new names, any type's new wildcard (the set may be empty).
   */
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
    if (controlPlane != null) {
      b.setControlPlane(controlPlane);
    }
    for (XdsResource r : due) {
      b.addResources(Any.pack(r.heartbeat()));
    }
    out.add(new Outcome.Send(type, b.setNonce(recordHeartbeat(nonces)).build()));
  }

  /** A request for this type. {@code nonces} mints the nonce of any response sent. */
  void onRequest(DiscoveryRequest req, TypeSnapshot snapshot, String nodeId,
      Supplier<String> nonces, List<Outcome> out) {
    String nonce = req.getResponseNonce();
    // Spec "Resource updates": no response for a request with a stale nonce; it is superseded.
    // Only a response this stream sent can supersede one: a type's first request carrying a
    // nonce (one from the stream it had with another replica) is answered as a first request,
    // or the client would wait forever (issue 21).
    if (!nonce.isEmpty() && started && !nonce.equals(lastNonce)) {
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
    unasked(change.removed());
    if (type.fullStateInSotw() && (!change.added().isEmpty() || change.wildcardAdded())) {
      owesResponse = true; // the answer tells the client which of them exist
    }
    if ((first || change.wildcardAdded()) && subscription.isWildcard()) {
      // Spec "How the client specifies what resources to return": a wildcard asks for the set the
      // server decides, and the empty set is an answer too; an answer of any type, so that a
      // client (a `meridian get secrets`) can tell "none" from "no answer".
      owesResponse = true;
    }
    if (first) {
      String clientVersion = req.getVersionInfo();
      if (!clientVersion.isEmpty() && clientVersion.equals(versionInfo(snapshot))) {
        // Reconnect (spec "Versioning and Node Identifier"): the client already holds exactly this
        // view under the same subscription, so nothing is resent.
        sent = view(snapshot);
        resumed(sent, snapshot);
        // Its version covers the names it asks for, so the response that gave it this view also
        // said which of them are absent (TP3): not said again. A REST-JSON poll is such a
        // reconnect each time, and must not be answered with the same errors on every poll.
        for (String n : subscription.names()) {
          if (subscription.isExplicitResource(n) && snapshot.get(n) == null) {
            absenceKnown(n);
          }
        }
        sentVersionInfo = clientVersion;
        ackedVersion = clientVersion;
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

  /**
   * Spec "Grouping Resources into Responses": a full-state type (Listener, Cluster) is answered with
   * the complete subscribed state whenever that changed; the others with the resources whose
   * version the client was not sent. One path for both: work out the diff, then send.
   */
  @Override
  void respond(TypeSnapshot snapshot, Supplier<String> nonces, List<Outcome> out) {
    boolean full = type.fullStateInSotw();
    boolean all = full || dirtyAll;
    boolean whole = all && seesWhole(snapshot);
    Diff diff = whole ? sharing.toWhole(sent, snapshot)
        : diff(all ? candidates(snapshot) : dirty, snapshot);
    if (whole && !subscription.isWildcard()) {
      presentAll(snapshot); // its names are exactly the type's: none absent, no walk over them
    } else {
      checkAbsent(all ? subscription.names() : dirty, snapshot);
    }
    clearDirty();
    List<io.envoyproxy.envoy.service.discovery.v3.ResourceError> errors = takeErrors();
    // Spec "Deleting Resources": SotW cannot tell that a resource of a non-full-state type is
    // gone; it is forgotten, so that a reappearance is sent.
    sent = whole ? VersionMap.shared(snapshot.versionMap()) : sent.with(diff, snapshot);
    List<XdsResource> resources;
    if (full) {
      if (diff.isEmpty() && !owesResponse && errors.isEmpty()) {
        return;
      }
      resources = whole ? snapshot.list() : resourcesOf(sent, snapshot);
    } else {
      if (diff.changed().isEmpty() && errors.isEmpty() && !owesResponse) {
        return; // (a response of errors alone changes nothing the client holds)
      }
      resources = diff.changed();
    }
    owesResponse = false;
    sentVersionInfo = versionInfo(snapshot);
    String nonce = record(diff.changed(), full ? sent : versionsOf(resources, snapshot), List.of(),
        snapshot, nonces);
    if (full && ttlEnabled()) {
      sentNow(resources); // the whole state went out: every TTL in it was refreshed
    }
    boolean wrap = features.ttlInSotw();
    DiscoveryResponse.Builder b = DiscoveryResponse.newBuilder()
        .setVersionInfo(sentVersionInfo)
        .setTypeUrl(type.typeUrl())
        .setNonce(nonce);
    if (controlPlane != null) {
      b.setControlPlane(controlPlane);
    }
    if (resources == snapshot.list() && !(wrap && hasTtl(resources))) {
      b.mergeFrom(snapshot.sotwWhole()); // the whole type: one list for every client, not copied
    } else {
      for (XdsResource r : resources) {
        b.addResources(r.sotwAny(wrap));
      }
    }
    b.addAllResourceErrors(errors); // TP3: why each requested name is absent
    out.add(new Outcome.Send(type, b.build()));
  }

  /**
   * Spec "Knowing When a Requested Resource Does Not Exist": of the {@code names} looked at (every
   * subscribed name, or those that changed), the ones the client names that do not exist for it
   * are reported per resource (TP3, {@link #absent}); SotW has no other way to say it for the
   * types that are not full-state.
   */
  private void checkAbsent(Iterable<String> names, TypeSnapshot snapshot) {
    if (subscription.names().isEmpty()) {
      return;
    }
    for (String n : names) {
      if (subscription.isExplicitResource(n)) {
        if (snapshot.get(n) == null) {
          absent(n);
        } else {
          present(n);
        }
      }
    }
  }

  /** Among {@code candidates}: what the subscription covers that the client lacks, and what is gone. */
  private Diff diff(Iterable<String> candidates, TypeSnapshot snapshot) {
    List<XdsResource> changed = new ArrayList<>();
    List<String> gone = new ArrayList<>();
    for (String n : candidates) {
      XdsResource r = subscription.covers(n) ? snapshot.get(n) : null;
      String held = sent.get(n);
      if (r == null) {
        if (held != null) {
          gone.add(n);
        }
      } else if (!r.version().equals(held)) {
        changed.add(r);
      }
    }
    // In name order: candidates come in a hash order, and equal states send equal bytes.
    changed.sort(java.util.Comparator.comparing(XdsResource::name));
    gone.sort(null);
    return new Diff(changed, gone);
  }

  /** A wildcard sees every resource of the type; so do names that are exactly the type's. */
  private boolean seesWhole(TypeSnapshot snapshot) {
    return subscription.isWildcard() || sharing.hasExactly(snapshot, subscription.names());
  }

  /** What the client should hold: the existing resources its subscription covers. */
  private VersionMap view(TypeSnapshot snapshot) {
    if (seesWhole(snapshot)) {
      return VersionMap.shared(snapshot.versionMap());
    }
    VersionMap.Editor view = VersionMap.EMPTY.edit();
    for (String n : subscription.names()) {
      XdsResource r = snapshot.get(n);
      if (r != null) {
        view.put(n, r.version());
      }
    }
    return view.commit(snapshot.versionMap());
  }

  /** The resources of {@code view}'s names, in name order. */
  private static List<XdsResource> resourcesOf(VersionMap view, TypeSnapshot snapshot) {
    List<XdsResource> list = new ArrayList<>(view.size());
    view.forEach((n, v) -> list.add(snapshot.get(n)));
    list.sort(java.util.Comparator.comparing(XdsResource::name));
    return list;
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
   * The version_info of this client's view: the versions of the resources its subscription covers
   * (a wildcard: the type's version in its group) and what it subscribes to. It is a function of
   * content alone, so every replica serving the same config computes the same one, and equal
   * versions mean the client was sent exactly this view under exactly this subscription: that is
   * what makes skipping the resend on reconnect safe (spec "Versioning and Node Identifier"). A
   * named subscription's version ignores resources it does not name, so a change elsewhere in the
   * type (which this client is never sent) does not cost it a resend when it fails over (issue 21).
   */
  private String versionInfo(TypeSnapshot snapshot) {
    TreeMap<String, String> parts = new TreeMap<>();
    parts.put("type", seesWhole(snapshot) ? snapshot.version()
        : sharing.viewVersion(snapshot, subscription.names()));
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
