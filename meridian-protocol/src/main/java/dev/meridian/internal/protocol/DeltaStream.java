package dev.meridian.internal.protocol;

import dev.meridian.xds.ResourceType;

import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import java.time.Clock;
import java.util.List;

/** An Incremental (Delta) stream: Delta ADS or one per-type Delta service. */
public final class DeltaStream extends XdsStream<DeltaDiscoveryRequest, DeltaTypeState> {
  private DeltaStream(ResourceType serviceType, Clock clock, Sharing sharing) {
    super(serviceType, clock, sharing);
  }

  /** An ADS stream; {@code sharing} is its hub's (see {@link Sharing}). */
  public static DeltaStream ads(Clock clock, Sharing sharing) {
    return new DeltaStream(null, clock, sharing);
  }

  /** A per-type stream; {@code sharing} is its hub's (see {@link Sharing}). */
  public static DeltaStream perType(ResourceType type, Clock clock, Sharing sharing) {
    return new DeltaStream(type, clock, sharing);
  }

  @Override
  String typeUrlOf(DeltaDiscoveryRequest request) {
    return request.getTypeUrl();
  }

  @Override
  Node nodeOf(DeltaDiscoveryRequest request) {
    return request.hasNode() ? request.getNode() : null;
  }

  /**
   * The names subscribed and unsubscribed, or the resumed versions if more: a reconnecting client
   * sends both for the same names (spec "Incremental xDS"), which count once.
   */
  @Override
  int namesIn(DeltaDiscoveryRequest request) {
    return namesOf(request);
  }

  /** The resource names a Delta request carries, as the bound on them counts them (above). */
  public static int namesOf(DeltaDiscoveryRequest request) {
    return Math.max(request.getResourceNamesSubscribeCount()
        + request.getResourceNamesUnsubscribeCount() + request.getResourceLocatorsSubscribeCount()
        + request.getResourceLocatorsUnsubscribeCount(), request.getInitialResourceVersionsCount());
  }

  @Override
  DeltaTypeState newState(ResourceType type) {
    return new DeltaTypeState(type, features(), clock, sharing);
  }

  @Override
  void handle(DeltaTypeState state, DeltaDiscoveryRequest request, TypeSnapshot snapshot,
      List<Outcome> out) {
    state.onRequest(request, snapshot, nodeId(), this::nextNonce, out);
  }

  @Override
  String variantName() {
    return "Delta";
  }
}
