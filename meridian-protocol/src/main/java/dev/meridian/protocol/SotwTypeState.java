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
  boolean replacesState() {
    return type.fullStateInSotw();
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
        dropped(List.of(n));
      }
    }
    if (change.wildcardRemoved()) {
      sent.keySet().removeIf(n -> !subscription.covers(n));
      acked.keySet().removeIf(n -> !subscription.covers(n));
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
        acked.clear();
        acked.putAll(sent);
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
      Map<String, String> carried = new TreeMap<>();
      view.forEach((n, r) -> {
        sent.put(n, r.version());
        carried.put(n, r.version());
        resources.add(r);
        if (!r.version().equals(before.get(n))) {
          onSent.accept(r);
        }
      });
      lastResponse = carried;
    } else {
      Collection<String> candidates = dirtyAll ? candidates(snapshot) : new ArrayList<>(dirty);
      clearDirty();
      Map<String, String> carried = new TreeMap<>();
      for (String n : candidates) {
        XdsResource r = subscription.covers(n) ? snapshot.get(n) : null;
        if (r == null) {
          // Deleted: SotW cannot say so for this type (spec "Deleting Resources"); forget it so
          // that a reappearance is sent.
          sent.remove(n);
        } else if (!r.version().equals(sent.get(n))) {
          sent.put(n, r.version());
          carried.put(n, r.version());
          resources.add(r);
          onSent.accept(r);
        }
      }
      if (resources.isEmpty()) {
        return;
      }
      lastResponse = carried;
    }
    owesResponse = false;
    String nonce = mint(nonceSupplier);
    sentVersionInfo = Versions.ofView(new TreeMap<>(sent));
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
