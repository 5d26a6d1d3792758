package dev.meridian.protocol;

import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * One State-of-the-World stream: ADS (any type, {@code type_url} required) or a per-type service
 * (the type is implied). Pure: events in, {@link Outcome}s out; the transport calls it from one
 * serial executor.
 */
public final class SotwStream {
  private final ResourceType serviceType; // null: ADS
  private final Clock clock;
  private final Map<ResourceType, SotwTypeState> states = new EnumMap<>(ResourceType.class);
  private Node node;
  private String group;
  private long nonces;
  private boolean closed;

  private SotwStream(ResourceType serviceType, Clock clock) {
    this.serviceType = serviceType;
    this.clock = clock;
  }

  public static SotwStream ads(Clock clock) {
    return new SotwStream(null, clock);
  }

  public static SotwStream perType(ResourceType type, Clock clock) {
    return new SotwStream(type, clock);
  }

  public boolean isAds() {
    return serviceType == null;
  }

  public List<Outcome> onRequest(DiscoveryRequest req, ServedConfig config) {
    List<Outcome> out = new ArrayList<>(2);
    if (closed) {
      return out;
    }
    // Spec "Versioning and Node Identifier": only the first request must carry the node.
    if (node == null) {
      if (!req.hasNode()) {
        return close(out, Outcome.CloseCode.INVALID_ARGUMENT,
            "the first request on a stream must carry a node");
      }
      node = req.getNode();
      group = config.groupFor(node);
    }
    ResourceType type;
    if (serviceType == null) {
      if (req.getTypeUrl().isEmpty()) {
        return close(out, Outcome.CloseCode.INVALID_ARGUMENT,
            "type_url is required on the aggregated (ADS) stream");
      }
      Optional<ResourceType> t = ResourceType.fromTypeUrl(req.getTypeUrl());
      if (t.isEmpty()) {
        return close(out, Outcome.CloseCode.INVALID_ARGUMENT,
            "unknown type_url '" + req.getTypeUrl() + "'; this server serves "
                + String.join(", ", ResourceType.all().stream().map(ResourceType::typeUrl).toList()));
      }
      type = t.get();
    } else {
      type = serviceType;
      if (!req.getTypeUrl().isEmpty() && !req.getTypeUrl().equals(type.typeUrl())) {
        return close(out, Outcome.CloseCode.INVALID_ARGUMENT, "type_url '" + req.getTypeUrl()
            + "' does not match this service, which serves " + type.typeUrl());
      }
    }
    if (!type.availableInSotw()) {
      return close(out, Outcome.CloseCode.INVALID_ARGUMENT,
          type.typeUrl() + " is served only over Incremental xDS (DeltaVirtualHosts or Delta ADS)");
    }
    SotwTypeState state = states.computeIfAbsent(type, SotwTypeState::new);
    state.onRequest(req, config.snapshot(group).get(type), node.getId(), this::nextNonce, clock,
        out);
    return out;
  }

  /**
   * The served config changed. {@code changes} maps group → type → changed names, as computed once
   * per reload by the caller; a node whose group changed is re-evaluated in full.
   */
  public List<Outcome> onConfig(ServedConfig config,
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
    for (SotwTypeState s : states.values()) {
      if (changed == null) {
        s.onSnapshot(snapshot.get(s.type), null, this::nextNonce, out);
      } else if (changed.containsKey(s.type)) {
        s.onSnapshot(snapshot.get(s.type), changed.get(s.type), this::nextNonce, out);
      }
    }
    return out;
  }

  private List<Outcome> close(List<Outcome> out, Outcome.CloseCode code, String message) {
    closed = true;
    out.add(new Outcome.Close(code, message));
    return out;
  }

  private String nextNonce() {
    return Long.toString(++nonces);
  }

  // --- status ---

  public Node node() {
    return node;
  }

  public String group() {
    return group;
  }

  public ResourceType serviceType() {
    return serviceType;
  }

  /**
   * A point-in-time view of one type's state on this stream, for admin and CSDS.
   *
   * @param ackedResourceVersions name → version of each resource the client ACKed (what it runs)
   * @param lastResponseVersions name → version of the resources in the latest response: in flight
   *     while {@code pendingNonce} is set, rejected if {@code lastNack} is for that response
   */
  public record TypeStatus(ResourceType type, boolean wildcard, Set<String> names,
      String sentVersion, String ackedVersion, String pendingNonce, Nack lastNack,
      Map<String, String> sentResourceVersions, Map<String, String> ackedResourceVersions,
      Map<String, String> lastResponseVersions) {}

  public List<TypeStatus> status() {
    List<TypeStatus> list = new ArrayList<>();
    for (SotwTypeState s : states.values()) {
      list.add(new TypeStatus(s.type, s.subscription.isWildcard(), Set.copyOf(s.subscription.names()),
          s.sentVersionInfo(), s.ackedVersion(), s.pendingNonce(), s.lastNack(), s.sentVersions(),
          s.ackedVersions(), s.lastResponseVersions()));
    }
    return list;
  }
}
