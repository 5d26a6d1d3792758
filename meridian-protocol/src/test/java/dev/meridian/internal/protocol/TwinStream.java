package dev.meridian.internal.protocol;

import dev.meridian.xds.ResourceType;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Message;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * For scenarios that drive a stream directly: the stream on an interning {@link Sharing} and its
 * twin on {@link Sharing#plain()} get every event; their outcomes must be the same bytes (issue 19).
 */
final class TwinStream<Q extends Message> {
  final XdsStream<Q, ?> stream;
  final XdsStream<Q, ?> plain;

  private TwinStream(XdsStream<Q, ?> stream, XdsStream<Q, ?> plain) {
    this.stream = stream;
    this.plain = plain;
  }

  static TwinStream<DiscoveryRequest> sotwAds(Clock clock) {
    return new TwinStream<>(SotwStream.ads(clock, Sharing.interning()),
        SotwStream.ads(clock, Sharing.plain()));
  }

  static TwinStream<DiscoveryRequest> sotwPerType(ResourceType type, Clock clock) {
    return new TwinStream<>(SotwStream.perType(type, clock, Sharing.interning()),
        SotwStream.perType(type, clock, Sharing.plain()));
  }

  static TwinStream<DeltaDiscoveryRequest> deltaAds(Clock clock) {
    return new TwinStream<>(DeltaStream.ads(clock, Sharing.interning()),
        DeltaStream.ads(clock, Sharing.plain()));
  }

  static TwinStream<DeltaDiscoveryRequest> deltaPerType(ResourceType type, Clock clock) {
    return new TwinStream<>(DeltaStream.perType(type, clock, Sharing.interning()),
        DeltaStream.perType(type, clock, Sharing.plain()));
  }

  /** Both streams: the client's verified identity (issue 20). */
  TwinStream<Q> withIdentity(String identity, boolean plaintextSecrets) {
    stream.withIdentity(identity, plaintextSecrets);
    plain.withIdentity(identity, plaintextSecrets);
    return this;
  }

  /** Both streams: the most resource names per request and per stream. */
  TwinStream<Q> withMaxResourceNames(int max) {
    stream.withMaxResourceNames(max);
    plain.withMaxResourceNames(max);
    return this;
  }

  List<Outcome> onRequest(Q request, ServedConfig config) {
    return SameOutcomes.check(stream.onRequest(request, config), plain.onRequest(request, config));
  }

  List<Outcome> onConfig(ServedConfig config, Map<String, Map<ResourceType, Set<String>>> changes) {
    // The twin gets only the changes that concern it, as from a hub's index (see Concerned).
    List<Outcome> indexed = Concerned.concerns(plain, config, changes)
        ? plain.onConfig(config, changes) : List.of();
    return SameOutcomes.check(stream.onConfig(config, changes), indexed);
  }

  /** Both streams: the config moved from {@code before} to {@code next} (changes worked out here). */
  List<Outcome> reload(ServedConfig before, ServedConfig next) {
    Map<String, Map<ResourceType, Set<String>>> changes = new java.util.HashMap<>();
    for (String g : next.groupNames()) {
      changes.put(g, next.snapshot(g).changedSince(before.snapshot(g)));
    }
    return onConfig(next, changes);
  }

  /** The nonce of the last response among {@code out}, else {@code previous}. */
  static String lastNonce(List<Outcome> out, String previous) {
    String nonce = previous;
    for (Outcome o : out) {
      if (o instanceof Outcome.Send s) {
        nonce = s.response() instanceof DiscoveryResponse r ? r.getNonce()
            : ((DeltaDiscoveryResponse) s.response()).getNonce();
      }
    }
    return nonce;
  }

  List<Outcome> onTick(ServedConfig config) {
    return SameOutcomes.check(stream.onTick(config), plain.onTick(config));
  }

  boolean wantsTick() {
    assertThat(stream.wantsTick()).isEqualTo(plain.wantsTick());
    return stream.wantsTick();
  }

  List<XdsStream.TypeStatus> status() {
    assertThat(stream.status()).isEqualTo(plain.status());
    return stream.status();
  }
}
