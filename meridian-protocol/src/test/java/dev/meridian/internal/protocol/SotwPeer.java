package dev.meridian.internal.protocol;

import dev.meridian.xds.ResourceType;

import static org.assertj.core.api.Assertions.assertThat;

import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A scripted client on one SotW stream (ADS or per-type) that drives the pure core and records what
 * it would have received. Acts like a real client: it remembers nonces and versions per type.
 * Every event also goes to a twin stream on {@link Sharing#plain()}, which must answer the same
 * bytes (issue 19: the rules hold without the sharing).
 */
final class SotwPeer {
  final boolean ads;
  final SotwStream stream;
  /** The same stream with nothing shared: must answer exactly as {@link #stream}. */
  final SotwStream plain;
  ServedConfig config;
  final List<Outcome> outcomes = new ArrayList<>();
  private final Map<ResourceType, DiscoveryResponse> lastResponse = new java.util.EnumMap<>(ResourceType.class);
  private final Map<ResourceType, String> acceptedVersion = new java.util.EnumMap<>(ResourceType.class);
  private boolean sentNode;
  String nodeId = "node-1";

  SotwPeer(boolean ads, ResourceType perType, ServedConfig config) {
    this(ads, perType, config, Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC));
  }

  /** On a clock the test may move (a fixed one proves that nothing waited for time). */
  SotwPeer(boolean ads, ResourceType perType, ServedConfig config, Clock clock) {
    this(ads, perType, config, clock, Fixtures.HUB);
  }

  /** On {@code sharing}, which peers of one scenario may share as the streams of one hub do. */
  SotwPeer(boolean ads, ResourceType perType, ServedConfig config, Clock clock, Sharing sharing) {
    this.ads = ads;
    this.stream = open(ads, perType, clock, sharing);
    this.plain = open(ads, perType, clock, Sharing.plain());
    this.config = config;
  }

  private static SotwStream open(boolean ads, ResourceType perType, Clock clock, Sharing sharing) {
    return ads ? SotwStream.ads(clock, sharing) : SotwStream.perType(perType, clock, sharing);
  }

  /** Sends a request as a client would: type URL on ADS, node on the first request. */
  List<Outcome> send(DiscoveryRequest.Builder req) {
    if (!ads && req.getTypeUrl().length() > 0) {
      req.clearTypeUrl(); // per-type services infer it
    }
    if (!sentNode) {
      req.setNode(Fixtures.node(nodeId));
      sentNode = true;
    }
    DiscoveryRequest r = req.build();
    return record(SameOutcomes.check(stream.onRequest(r, config), plain.onRequest(r, config)));
  }

  /** Subscribes (or re-subscribes) to names, carrying the current version and nonce of the type. */
  List<Outcome> subscribe(ResourceType type, String... names) {
    DiscoveryRequest.Builder b = Fixtures.request(type, names)
        .setVersionInfo(acceptedVersion.getOrDefault(type, ""));
    DiscoveryResponse last = lastResponse.get(type);
    if (last != null) {
      b.setResponseNonce(last.getNonce());
    }
    return send(b);
  }

  /** ACKs the last response of the type with the given subscription. */
  List<Outcome> ack(ResourceType type, String... names) {
    DiscoveryResponse last = lastResponse.get(type);
    acceptedVersion.put(type, last.getVersionInfo());
    return send(Fixtures.request(type, names).setVersionInfo(last.getVersionInfo())
        .setResponseNonce(last.getNonce()));
  }

  List<Outcome> nack(ResourceType type, String message, String... names) {
    DiscoveryResponse last = lastResponse.get(type);
    return send(Fixtures.request(type, names)
        .setVersionInfo(acceptedVersion.getOrDefault(type, ""))
        .setResponseNonce(last.getNonce())
        .setErrorDetail(com.google.rpc.Status.newBuilder().setCode(3).setMessage(message)));
  }

  List<Outcome> reload(ServedConfig next) {
    Map<String, Map<ResourceType, Set<String>>> changes = new java.util.HashMap<>();
    for (String g : next.groupNames()) {
      changes.put(g, next.snapshot(g).changedSince(config.snapshot(g)));
    }
    config = next;
    // The twin gets only the changes that concern it, as from a hub's index (see Concerned).
    List<Outcome> indexed = Concerned.concerns(plain, next, changes)
        ? plain.onConfig(next, changes) : List.of();
    return record(SameOutcomes.check(stream.onConfig(next, changes), indexed));
  }

  /** Time passed: the heartbeats and bounded waits that are due. */
  List<Outcome> tick() {
    return record(SameOutcomes.check(stream.onTick(config), plain.onTick(config)));
  }

  private List<Outcome> record(List<Outcome> out) {
    outcomes.addAll(out);
    for (Outcome o : out) {
      if (o instanceof Outcome.Send s) {
        lastResponse.put(s.type(), (DiscoveryResponse) s.response());
      }
    }
    return out;
  }

  static List<DiscoveryResponse> responses(List<Outcome> out) {
    List<DiscoveryResponse> list = new ArrayList<>();
    for (Outcome o : out) {
      if (o instanceof Outcome.Send s) {
        list.add((DiscoveryResponse) s.response());
      }
    }
    return list;
  }

  static DiscoveryResponse single(List<Outcome> out) {
    List<DiscoveryResponse> r = responses(out);
    assertThat(r).as("exactly one response in %s", out).hasSize(1);
    return r.get(0);
  }

  DiscoveryResponse last(ResourceType type) {
    return lastResponse.get(type);
  }
}
