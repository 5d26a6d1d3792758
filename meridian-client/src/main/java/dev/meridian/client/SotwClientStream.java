package dev.meridian.client;

import com.google.rpc.Code;
import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.Subscription;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** State of the World: every request carries the full set of names, the version and the nonce. */
final class SotwClientStream extends ClientStream<DiscoveryRequest> {
  /** Per type on the current stream. */
  private static final class PerType {
    String nonce = "";
    boolean everNamed;
    boolean sent;
    List<String> lastNames = List.of();
    /** Names in every request sent on this stream so far; null before the first request. */
    Set<String> inEveryRequest;
  }

  private final Map<ResourceType, PerType> perTypes = new EnumMap<>(ResourceType.class);

  SotwClientStream(Bootstrap.ServerInfo server, StreamScope scope, Deps deps) {
    super(server, scope, deps);
  }

  @Override
  XdsTransport.Call<DiscoveryRequest> open(int gen) {
    ctx.throwIfNotInThisContext();
    return transport.openSotw(scope, listenerFor(gen, this::handleResponse));
  }

  @Override
  void forgetStream() {
    ctx.throwIfNotInThisContext();
    perTypes.clear();
  }

  @Override
  void sendInitial(ResourceType type) {
    ctx.throwIfNotInThisContext();
    send(type, null, false);
  }

  @Override
  void subscriptionChanged(ResourceType type) {
    ctx.throwIfNotInThisContext();
    if (call != null) {
      send(type, null, true);
    }
  }


  /** Sends the type's request; with {@code onlyIfChanged}, only when the names changed. */
  private void send(ResourceType type, String errorDetail, boolean onlyIfChanged) {
    ctx.throwIfNotInThisContext();
    ResourceStore.Interest want = store.interest(server, type);
    PerType p = perTypes.computeIfAbsent(type, t -> new PerType());
    Set<String> named = want.names();
    List<String> names = new ArrayList<>();
    if (want.wildcard()) {
      // Spec "How the client specifies what resources to return": an empty list is the legacy
      // wildcard, understood by every server, as long as we never named anything on this stream.
      if (!named.isEmpty() || p.everNamed) {
        names.add(Subscription.WILDCARD);
      }
    } else if (named.isEmpty() && !p.sent) {
      return; // never subscribed on this stream: nothing to unsubscribe
    }
    names.addAll(named);
    if (onlyIfChanged && p.sent && names.equals(p.lastNames)) {
      return;
    }
    p.lastNames = List.copyOf(names);
    if (!names.isEmpty()) {
      p.everNamed = true;
    }
    DiscoveryRequest.Builder r = DiscoveryRequest.newBuilder()
        .setTypeUrl(type.typeUrl())
        .setVersionInfo(store.acceptedVersion(server, type))
        .setResponseNonce(p.nonce)
        .addAllResourceNames(names);
    if (!p.sent) {
      r.setNode(node); // spec: the node is needed on the first request only
    }
    if (errorDetail != null) {
      r.setErrorDetail(com.google.rpc.Status.newBuilder()
          .setCode(Code.INVALID_ARGUMENT_VALUE).setMessage(errorDetail));
    }
    p.sent = true;
    if (p.inEveryRequest == null) {
      p.inEveryRequest = new java.util.HashSet<>(named);
    } else {
      p.inEveryRequest.retainAll(named);
    }
    call.send(r.build());
  }

  private void handleResponse(DiscoveryResponse response) {
    ctx.throwIfNotInThisContext();
    responseReceived = true;
    noteControlPlane(response.getControlPlane().getIdentifier());
    Optional<ResourceType> parsed = ResourceType.fromTypeUrl(response.getTypeUrl());
    if (parsed.isEmpty() || !scope.carries(parsed.get())) {
      // Cannot be applied at all: NACK it under its own type URL.
      call.send(DiscoveryRequest.newBuilder().setTypeUrl(response.getTypeUrl())
          .setResponseNonce(response.getNonce())
          .setErrorDetail(com.google.rpc.Status.newBuilder().setCode(Code.INVALID_ARGUMENT_VALUE)
              .setMessage("unexpected type URL " + response.getTypeUrl()
                  + (scope instanceof StreamScope.OneType one
                      ? " on the " + one.type().typeUrl() + " stream" : "")))
          .build());
      whenProcessed().run();
      return;
    }
    ResourceType type = parsed.get();
    PerType p = perTypes.computeIfAbsent(type, t -> new PerType());
    // Whatever request this response answers, it named these resources.
    Set<String> requested = p.inEveryRequest == null ? Set.of() : Set.copyOf(p.inEveryRequest);
    Runnable processed = whenProcessed();
    boolean handedOver = false; // from then on the handler runs `processed`, even if it throws
    String nack;
    try {
      DecodedResponse d = DecodedResponse.sotw(type, response.getVersionInfo(),
          response.getResourcesList()).withResourceErrors(response.getResourceErrorsList());
      handedOver = true;
      List<String> errors = handler.handleSotwResponse(server, d, response.getVersionInfo(),
          requested, processed);
      nack = errors.isEmpty() ? null : d.errorDetail();
    } catch (RuntimeException e) {
      nack = failedToApply(type, e);
      if (!handedOver) {
        processed.run();
      }
    }
    p.nonce = response.getNonce();
    // Spec "ACK/NACK": the ACK carries the new version; a NACK the last accepted one.
    send(type, nack, false);
  }
}
