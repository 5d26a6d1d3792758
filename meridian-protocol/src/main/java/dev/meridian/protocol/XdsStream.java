package dev.meridian.protocol;

import com.google.protobuf.Message;
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
  final Map<ResourceType, S> states = new EnumMap<>(ResourceType.class);
  private Node node;
  private ClientFeatures features;
  private String group;
  private HeartbeatPolicy heartbeats = HeartbeatPolicy.DEFAULT;
  private long nonces;
  private boolean closed;

  XdsStream(ResourceType serviceType, Clock clock) {
    this.serviceType = serviceType;
    this.clock = clock;
  }

  abstract String typeUrlOf(Q request);

  abstract Node nodeOf(Q request); // null when absent

  abstract S newState(ResourceType type);

  abstract void handle(S state, Q request, TypeSnapshot snapshot, List<Outcome> out);

  /** Whether this variant serves the type at all. */
  boolean serves(ResourceType type) {
    return true;
  }

  abstract String variantName();

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
      node = n;
      features = ClientFeatures.of(n);
      group = config.groupFor(node);
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
          type.typeUrl() + " is served only over Incremental xDS (DeltaVirtualHosts or Delta ADS)");
    }
    S state = states.computeIfAbsent(type, this::newState);
    handle(state, req, config.snapshot(group).get(type), out);
    return out;
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
    String newGroup = config.groupFor(node);
    boolean moved = !newGroup.equals(group);
    group = newGroup;
    Map<ResourceType, Set<String>> changed = moved ? null
        : changes.getOrDefault(group, Collections.emptyMap());
    Snapshot snapshot = config.snapshot(group);
    // EnumMap iterates in make-before-break order (see ResourceType).
    for (S s : states.values()) {
      if (changed == null) {
        s.onSnapshot(snapshot.get(s.type), null, this::nextNonce, out);
      } else if (changed.containsKey(s.type)) {
        s.onSnapshot(snapshot.get(s.type), changed.get(s.type), this::nextNonce, out);
      }
    }
    return out;
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
      s.onTick(snapshot.get(s.type), heartbeats, this::nextNonce, out);
    }
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

  /** "SotW" or "Delta". */
  public final String variant() {
    return variantName();
  }

  /**
   * A point-in-time view of one type's state on this stream, for admin and CSDS.
   *
   * @param sentVersion the last version_info (SotW) or system_version_info (Delta) sent
   * @param resourceVersions per resource, the version the client was last sent (SotW) or holds
   *     (Delta; an empty version: told it does not exist)
   */
  public record TypeStatus(ResourceType type, boolean wildcard, Set<String> names,
      String sentVersion, String ackedVersion, String pendingNonce, Nack lastNack,
      Map<String, String> resourceVersions) {}

  public final List<TypeStatus> status() {
    List<TypeStatus> list = new ArrayList<>();
    for (S s : states.values()) {
      list.add(new TypeStatus(s.type, s.subscription.isWildcard(),
          Set.copyOf(s.subscription.names()), s.sentVersion(), s.ackedVersion, s.pendingNonce(),
          s.lastNack, s.resourceVersions()));
    }
    return list;
  }
}
