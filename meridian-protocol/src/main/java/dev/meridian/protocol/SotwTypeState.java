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
final class SotwTypeState {
  final ResourceType type;
  final Subscription subscription = new Subscription();
  /** name → version of what this client was last sent (or proved to hold on reconnect). */
  private final Map<String, String> sent = new HashMap<>();
  private boolean started;
  private String sentVersionInfo = "";
  private String lastNonce; // most recent nonce sent for this type; older ones are stale
  private boolean awaitingAck;
  private String ackedVersion = "";
  private Nack lastNack;
  /** name → version the client ACKed (for status reporting: what the client is known to run). */
  private final Map<String, String> acked = new HashMap<>();
  /** name → version of the resources carried by the latest response (in flight or NACKed). */
  private Map<String, String> lastResponse = Map.of();
  /** Names changed by config updates while a response was un-ACKed; null with dirtyAll. */
  private final Set<String> dirty = new HashSet<>();
  private boolean dirtyAll;
  /** A full-state type owes the client a response even if nothing changed (first request, new names). */
  private boolean owesResponse;

  SotwTypeState(ResourceType type) {
    this.type = type;
  }

  /** A request for this type. {@code nonceSupplier} mints the nonce of any response sent. */
  void onRequest(DiscoveryRequest req, TypeSnapshot snapshot, String nodeId,
      java.util.function.Supplier<String> nonceSupplier, java.time.Clock clock,
      List<Outcome> out) {
    String nonce = req.getResponseNonce();
    // Spec "Resource updates": no response for a request with a stale nonce; it is superseded.
    if (!nonce.isEmpty() && !nonce.equals(lastNonce)) {
      out.add(new Outcome.Ignored(type, "stale nonce " + nonce + " (latest " + lastNonce + ")"));
      return;
    }
    boolean first = !started;
    started = true;
    if (!nonce.isEmpty() && awaitingAck) {
      awaitingAck = false;
      // Spec "ACK and NACK semantics summary": only a NACK populates error_detail.
      if (req.hasErrorDetail()) {
        lastNack = new Nack(nodeId, type, sentVersionInfo, req.getVersionInfo(), nonce,
            req.getErrorDetail().getCode(), Nack.bound(req.getErrorDetail().getMessage()),
            clock.instant());
        out.add(new Outcome.Nacked(lastNack));
        // The rejected resources stay in `sent`: a NACKed version is never resent, only a new one.
      } else {
        ackedVersion = req.getVersionInfo();
        if (type.fullStateInSotw()) {
          acked.clear(); // a full-state response replaces everything the client held
        }
        acked.putAll(lastResponse);
        out.add(new Outcome.Ack(type, ackedVersion, nonce));
      }
    }
    Subscription.Change change = subscription.replace(req.getResourceNamesList());
    // Spec "How the client specifies what resources to return": newly requested names are resent
    // even if sent before; dropped names are forgotten so that a later re-request resends them.
    for (String n : change.removed()) {
      if (!subscription.covers(n)) {
        sent.remove(n);
        acked.remove(n);
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
    if (!awaitingAck) {
      respond(snapshot, nonceSupplier, out);
    }
  }

  /** The config changed; {@code changed} names differ (null: anything may have). */
  void onSnapshot(TypeSnapshot snapshot, Collection<String> changed,
      java.util.function.Supplier<String> nonceSupplier, List<Outcome> out) {
    if (!started) {
      return;
    }
    if (changed == null) {
      dirtyAll = true;
    } else {
      dirty.addAll(changed);
    }
    // Flow control: at most one un-ACKed response per type; changes meanwhile coalesce into state.
    if (!awaitingAck) {
      respond(snapshot, nonceSupplier, out);
    }
  }

  private void respond(TypeSnapshot snapshot, java.util.function.Supplier<String> nonceSupplier,
      List<Outcome> out) {
    if (!dirtyAll && dirty.isEmpty() && !owesResponse) {
      return;
    }
    List<Any> resources = new ArrayList<>();
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
      sent.clear();
      Map<String, String> carried = new TreeMap<>();
      view.forEach((n, r) -> {
        sent.put(n, r.version());
        carried.put(n, r.version());
        resources.add(r.any());
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
          resources.add(r.any());
        }
      }
      if (resources.isEmpty()) {
        return;
      }
      lastResponse = carried;
    }
    owesResponse = false;
    String nonce = nonceSupplier.get();
    sentVersionInfo = Versions.ofView(new TreeMap<>(sent));
    lastNonce = nonce;
    awaitingAck = true;
    out.add(new Outcome.Send(type, DiscoveryResponse.newBuilder()
        .setVersionInfo(sentVersionInfo)
        .setTypeUrl(type.typeUrl())
        .setNonce(nonce)
        .addAllResources(resources)
        .build()));
  }

  private void clearDirty() {
    dirty.clear();
    dirtyAll = false;
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

  boolean started() {
    return started;
  }

  String sentVersionInfo() {
    return sentVersionInfo;
  }

  String ackedVersion() {
    return ackedVersion;
  }

  Nack lastNack() {
    return lastNack;
  }

  String pendingNonce() {
    return awaitingAck ? lastNonce : null;
  }

  Map<String, String> sentVersions() {
    return Map.copyOf(sent);
  }

  Map<String, String> ackedVersions() {
    return Map.copyOf(acked);
  }

  Map<String, String> lastResponseVersions() {
    return lastResponse;
  }
}
