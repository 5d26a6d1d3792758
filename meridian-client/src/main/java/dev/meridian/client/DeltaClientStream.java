package dev.meridian.client;

import com.google.rpc.Code;
import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.Subscription;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Incremental (Delta) xDS: requests carry subscription changes; responses carry changed resources
 * with their own versions and {@code removed_resources} (spec "Incremental xDS").
 */
final class DeltaClientStream extends ClientStream<DeltaDiscoveryRequest> {
  /** What the server was told, per type, on the current stream. */
  private static final class PerType {
    final Set<String> names = new LinkedHashSet<>();
    boolean wildcard;
    boolean explicitWildcard;
    boolean sent;
  }

  private final Map<ResourceType, PerType> perTypes = new EnumMap<>(ResourceType.class);

  DeltaClientStream(Bootstrap.ServerInfo server, StreamScope scope, Deps deps) {
    super(server, scope, deps);
  }

  @Override
  XdsTransport.Call<DeltaDiscoveryRequest> open(int gen) {
    ctx.throwIfNotInThisContext();
    return transport.openDelta(scope, listenerFor(gen, this::handleResponse));
  }

  @Override
  void forgetStream() {
    ctx.throwIfNotInThisContext();
    perTypes.clear();
  }

  /**
   * Spec "Incremental xDS" (reconnect): the first request on a stream lists everything we want
   * and, in {@code initial_resource_versions}, what we already hold, so the server sends only what
   * changed.
   */
  @Override
  void sendInitial(ResourceType type) {
    ctx.throwIfNotInThisContext();
    ResourceStore.Interest want = store.interest(server, type);
    PerType p = new PerType();
    perTypes.put(type, p);
    Set<String> named = want.names();
    DeltaDiscoveryRequest.Builder r = DeltaDiscoveryRequest.newBuilder()
        .setTypeUrl(type.typeUrl())
        .setNode(node)
        .putAllInitialResourceVersions(store.heldVersions(server, type));
    if (want.wildcard()) {
      p.wildcard = true;
      if (!named.isEmpty()) {
        p.explicitWildcard = true;
        r.addResourceNamesSubscribe(Subscription.WILDCARD);
      }
    }
    r.addAllResourceNamesSubscribe(named);
    p.names.addAll(named);
    p.sent = true;
    call.send(r.build());
  }

  @Override
  void subscriptionChanged(ResourceType type) {
    ctx.throwIfNotInThisContext();
    if (call == null) {
      return;
    }
    PerType p = perTypes.get(type);
    ResourceStore.Interest interest = store.interest(server, type);
    if (p == null) {
      if (interest.any()) {
        sendInitial(type); // an empty first request would mean the legacy wildcard
      }
      return;
    }
    Set<String> want = interest.names();
    List<String> subscribe = new ArrayList<>();
    List<String> unsubscribe = new ArrayList<>();
    for (String n : want) {
      if (!p.names.contains(n)) {
        subscribe.add(n);
      }
    }
    for (String n : p.names) {
      if (!want.contains(n)) {
        unsubscribe.add(n);
      }
    }
    boolean wildcard = interest.wildcard();
    if (wildcard && (!p.wildcard || (!p.explicitWildcard && !subscribe.isEmpty()))) {
      // Naming a resource ends the legacy wildcard, so from then on the wildcard is explicit.
      subscribe.add(0, Subscription.WILDCARD);
      p.explicitWildcard = true;
    } else if (!wildcard && p.wildcard) {
      unsubscribe.add(Subscription.WILDCARD);
      p.explicitWildcard = false;
    }
    p.wildcard = wildcard;
    p.names.clear();
    p.names.addAll(want);
    if (subscribe.isEmpty() && unsubscribe.isEmpty()) {
      return;
    }
    call.send(DeltaDiscoveryRequest.newBuilder().setTypeUrl(type.typeUrl())
        .addAllResourceNamesSubscribe(subscribe)
        .addAllResourceNamesUnsubscribe(unsubscribe)
        .build());
  }


  private void handleResponse(DeltaDiscoveryResponse response) {
    ctx.throwIfNotInThisContext();
    responseReceived = true;
    noteControlPlane(response.getControlPlane().getIdentifier());
    Optional<ResourceType> parsed = ResourceType.fromTypeUrl(response.getTypeUrl());
    DeltaDiscoveryRequest.Builder ack = DeltaDiscoveryRequest.newBuilder()
        .setTypeUrl(response.getTypeUrl())
        .setResponseNonce(response.getNonce());
    if (parsed.isEmpty() || !scope.carries(parsed.get())) {
      call.send(ack.setErrorDetail(com.google.rpc.Status.newBuilder()
          .setCode(Code.INVALID_ARGUMENT_VALUE)
          .setMessage("unexpected type URL " + response.getTypeUrl())).build());
      whenProcessed().run();
      return;
    }
    Runnable processed = whenProcessed();
    boolean handedOver = false; // from then on the handler runs `processed`, even if it throws
    String nack;
    try {
      DecodedResponse d = DecodedResponse.delta(parsed.get(), response.getResourcesList(),
          response.getRemovedResourcesList())
          .withResourceErrors(response.getResourceErrorsList());
      handedOver = true;
      List<String> errors = handler.handleDeltaResponse(server, d,
          response.getSystemVersionInfo(), processed);
      nack = errors.isEmpty() ? null : d.errorDetail();
    } catch (RuntimeException e) {
      nack = failedToApply(parsed.get(), e);
      if (!handedOver) {
        processed.run();
      }
    }
    if (nack != null) {
      ack.setErrorDetail(com.google.rpc.Status.newBuilder().setCode(Code.INVALID_ARGUMENT_VALUE)
          .setMessage(nack));
    }
    call.send(ack.build());
  }
}
