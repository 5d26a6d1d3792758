package dev.meridian.protocol;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * State-of-the-World state of one resource type on one stream. Not thread-safe: the owning stream
 * mutates it on its own serial executor.
 */
final class SotwTypeState extends TypeState {
  /** name → version of what this client was last sent (or proved to hold on reconnect). */
  private final Map<String, String> sent = new HashMap<>();
  private String sentVersionInfo = "";
  /** A full-state type owes the client a response even if nothing changed (first request, new names). */
  private boolean owesResponse;

  SotwTypeState(ResourceType type, ClientFeatures features, java.time.Clock clock) {
    super(type, features, clock);
  }

  @Override
  boolean ttlEnabled() {
    return features.ttlInSotw();
  }

  @Override
  void forget(String key) {
    sent.remove(key);
    if (type.fullStateInSotw()) {
      owesResponse = true;
    }
  }

  @Override
  Map<String, String> clientHolds() {
    return sent;
  }

  @Override
  void heartbeat(List<XdsResource> due, java.util.function.Supplier<String> nonces,
      List<Outcome> out) {
    DiscoveryResponse.Builder b = DiscoveryResponse.newBuilder()
        .setVersionInfo(sentVersionInfo) // a heartbeat is not an update: the version stays
        .setTypeUrl(type.typeUrl());
    for (XdsResource r : due) {
      b.addResources(Any.pack(r.heartbeat()));
    }
    out.add(new Outcome.Send(type, b.setNonce(mint(nonces)).build()));
  }

  @Override
  boolean owesResponse() {
    return owesResponse;
  }

  /** A request for this type. {@code nonceSupplier} mints the nonce of any response sent. */
  void onRequest(DiscoveryRequest req, TypeSnapshot snapshot, String nodeId,
      java.util.function.Supplier<String> nonceSupplier, List<Outcome> out) {
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
    for (String n : change.removed()) {
      if (!subscription.covers(n)) {
        sent.remove(n);
      }
    }
    if (change.wildcardRemoved()) {
      sent.keySet().removeIf(n -> !subscription.covers(n));
    }
    for (String n : change.added()) {
      sent.remove(n);
    }
    if (type.fullStateInSotw() && (!change.added().isEmpty() || change.wildcardAdded())) {
      owesResponse = true; // the answer tells the client which of them exist
    }
    if (first) {
      String clientVersion = req.getVersionInfo();
      if (!clientVersion.isEmpty() && clientVersion.equals(viewVersion(snapshot))) {
        // Reconnect (spec "Versioning and Node Identifier"): the client already holds exactly this
        // view under the same subscription, so nothing is resent.
        sent.clear();
        view(snapshot).forEach((n, r) -> sent.put(n, r.version()));
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
    respondIfIdle(snapshot, nonceSupplier, out);
  }

  @Override
  void respond(TypeSnapshot snapshot, java.util.function.Supplier<String> nonceSupplier,
      List<Outcome> out) {
    List<XdsResource> resources = new ArrayList<>();
    if (type.fullStateInSotw()) {
      // Spec "Grouping Resources into Responses": the complete subscribed state, every time.
      Map<String, XdsResource> view = view(snapshot);
      boolean same = view.size() == sent.size();
      if (same) {
        for (Map.Entry<String, XdsResource> e : view.entrySet()) {
          if (!e.getValue().version().equals(sent.get(e.getKey()))) {
            same = false;
            break;
          }
        }
      }
      clearDirty();
      if (same && !owesResponse) {
        return;
      }
      Map<String, String> before = new HashMap<>(sent);
      sent.clear();
      view.forEach((n, r) -> {
        sent.put(n, r.version());
        resources.add(r);
        if (!r.version().equals(before.get(n))) {
          onSent.accept(r);
        }
      });
    } else {
      Collection<String> candidates = dirtyAll ? candidates(snapshot) : new ArrayList<>(dirty);
      clearDirty();
      for (String n : candidates) {
        XdsResource r = subscription.covers(n) ? snapshot.get(n) : null;
        if (r == null) {
          // Deleted: SotW cannot say so for this type (spec "Deleting Resources"); forget it so
          // that a reappearance is sent.
          sent.remove(n);
        } else if (!r.version().equals(sent.get(n))) {
          sent.put(n, r.version());
          resources.add(r);
          onSent.accept(r);
        }
      }
      if (resources.isEmpty()) {
        return;
      }
    }
    owesResponse = false;
    String nonce = mint(nonceSupplier);
    sentVersionInfo = versionOfSent(snapshot);
    boolean wrap = features.ttlInSotw();
    DiscoveryResponse.Builder b = DiscoveryResponse.newBuilder()
        .setVersionInfo(sentVersionInfo)
        .setTypeUrl(type.typeUrl())
        .setNonce(nonce);
    for (XdsResource r : resources) {
      b.addResources(r.sotwAny(wrap));
    }
    sentNow(resources);
    out.add(new Outcome.Send(type, b.build()));
  }

  /**
   * {@link Versions#ofView} of {@link #sent}. When the client holds exactly the type's snapshot (the
   * common case: wildcard, or every name subscribed), that is the snapshot's version, computed once
   * per snapshot and shared by every stream; checking it is a walk of the snapshot with a hash lookup per name instead of a
   * sorted copy and a SHA-256 over every name per response.
   */
  private String versionOfSent(TypeSnapshot snapshot) {
    if (sent.size() == snapshot.size()) {
      boolean same = true;
      // Walk the snapshot (in order, no lookups) and look names up in the HashMap.
      for (Map.Entry<String, XdsResource> e : snapshot.resources().entrySet()) {
        String held = sent.get(e.getKey());
        if (held == null || !held.equals(e.getValue().version())) {
          same = false;
          break;
        }
      }
      if (same) {
        return snapshot.version();
      }
    }
    return Versions.ofView(new TreeMap<>(sent));
  }

  /** Everything that could need sending: every subscribed name and every name sent before. */
  private Collection<String> candidates(TypeSnapshot snapshot) {
    Set<String> names = new HashSet<>(sent.keySet());
    if (subscription.isWildcard()) {
      names.addAll(snapshot.resources().keySet());
    }
    names.addAll(subscription.names());
    return names;
  }

  /** The existing resources this subscription covers, sorted by name. */
  private Map<String, XdsResource> view(TypeSnapshot snapshot) {
    if (subscription.isWildcard() && subscription.names().isEmpty()) {
      return snapshot.resources();
    }
    TreeMap<String, XdsResource> view = new TreeMap<>();
    if (subscription.isWildcard()) {
      view.putAll(snapshot.resources());
    }
    for (String n : subscription.names()) {
      XdsResource r = snapshot.get(n);
      if (r != null) {
        view.put(n, r);
      }
    }
    return view;
  }

  private String viewVersion(TypeSnapshot snapshot) {
    Map<String, XdsResource> view = view(snapshot);
    if (view == snapshot.resources()) {
      return snapshot.version();
    }
    TreeMap<String, String> versions = new TreeMap<>();
    view.forEach((n, r) -> versions.put(n, r.version()));
    return Versions.ofView(versions);
  }

  // --- read-only views for status reporting ---

  @Override
  String sentVersion() {
    return sentVersionInfo;
  }

  @Override
  Map<String, String> resourceVersions() {
    return Map.copyOf(sent);
  }
}
