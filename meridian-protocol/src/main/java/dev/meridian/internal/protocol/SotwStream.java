package dev.meridian.internal.protocol;

import dev.meridian.xds.ResourceType;

import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import java.time.Clock;
import java.util.List;

/** A State-of-the-World stream: ADS or one per-type service. */
public final class SotwStream extends XdsStream<DiscoveryRequest, SotwTypeState> {
  private SotwStream(ResourceType serviceType, Clock clock, Sharing sharing) {
    super(serviceType, clock, sharing);
  }

  /** An ADS stream; {@code sharing} is its hub's (see {@link Sharing}). */
  public static SotwStream ads(Clock clock, Sharing sharing) {
    return new SotwStream(null, clock, sharing);
  }

  /** A per-type stream; {@code sharing} is its hub's (see {@link Sharing}). */
  public static SotwStream perType(ResourceType type, Clock clock, Sharing sharing) {
    return new SotwStream(type, clock, sharing);
  }

  @Override
  String typeUrlOf(DiscoveryRequest request) {
    return request.getTypeUrl();
  }

  @Override
  Node nodeOf(DiscoveryRequest request) {
    return request.hasNode() ? request.getNode() : null;
  }

  @Override
  int namesIn(DiscoveryRequest request) {
    return namesOf(request);
  }

  /** The resource names a SotW request carries, as the bound on them counts them. */
  public static int namesOf(DiscoveryRequest request) {
    return request.getResourceNamesCount() + request.getResourceLocatorsCount();
  }

  @Override
  SotwTypeState newState(ResourceType type) {
    return new SotwTypeState(type, features(), clock, sharing);
  }

  @Override
  boolean serves(ResourceType type) {
    return type.availableInSotw();
  }

  @Override
  void handle(SotwTypeState state, DiscoveryRequest request, TypeSnapshot snapshot,
      List<Outcome> out) {
    state.onRequest(request, snapshot, nodeId(), this::nextNonce, out);
  }

  /**
   * TP1 "Discovery request and responses": glob collections are defined for Incremental xDS only
   * (SotW could not tell a client that a member was removed, for most types), so a SotW request
   * for one ends the stream, as a SotW request for VHDS does.
   */
  @Override
  String refusal(DiscoveryRequest request) {
    for (String n : request.getResourceNamesList()) {
      if (XdstpName.isGlob(n)) {
        return "glob collection " + n + " is served only over Incremental xDS (Delta); "
            + "xDS TP1 defines glob collections for Delta only";
      }
    }
    return null;
  }

  @Override
  String variantName() {
    return "SotW";
  }
}
