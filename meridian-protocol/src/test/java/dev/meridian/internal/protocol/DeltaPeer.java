package dev.meridian.internal.protocol;

import dev.meridian.xds.ResourceType;

import static org.assertj.core.api.Assertions.assertThat;

import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A scripted Delta client driving the pure core; remembers the last response per type. Every event
 * also goes to a twin stream on {@link Sharing#plain()}, which must answer the same bytes (issue 19).
 */
final class DeltaPeer {
  final DeltaStream stream;
  /** The same stream with nothing shared: must answer exactly as {@link #stream}. */
  final DeltaStream plain;
  final boolean ads;
  ServedConfig config;
  private final Map<ResourceType, DeltaDiscoveryResponse> last = new EnumMap<>(ResourceType.class);
  private boolean sentNode;
  String nodeId = "node-1";

  DeltaPeer(boolean ads, ResourceType perType, ServedConfig config) {
    this(ads, perType, config, Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC));
  }

  /** On a clock the test may move (a fixed one proves that nothing waited for time). */
  DeltaPeer(boolean ads, ResourceType perType, ServedConfig config, Clock clock) {
    this(ads, perType, config, clock, Fixtures.HUB);
  }

  /** On {@code sharing}, which peers of one scenario may share as the streams of one hub do. */
  DeltaPeer(boolean ads, ResourceType perType, ServedConfig config, Clock clock, Sharing sharing) {
    this.ads = ads;
    this.stream = open(ads, perType, clock, sharing);
    this.plain = open(ads, perType, clock, Sharing.plain());
    this.config = config;
  }

  private static DeltaStream open(boolean ads, ResourceType perType, Clock clock, Sharing sharing) {
    return ads ? DeltaStream.ads(clock, sharing) : DeltaStream.perType(perType, clock, sharing);
  }

  List<Outcome> send(DeltaDiscoveryRequest.Builder b) {
    if (!ads) {
      b.clearTypeUrl();
    }
    if (!sentNode) {
      b.setNode(Fixtures.node(nodeId));
      sentNode = true;
    }
    DeltaDiscoveryRequest r = b.build();
    List<Outcome> out = SameOutcomes.check(stream.onRequest(r, config), plain.onRequest(r, config));
    record(out);
    return out;
  }

  static DeltaDiscoveryRequest.Builder req(ResourceType type) {
    return DeltaDiscoveryRequest.newBuilder().setTypeUrl(type.typeUrl());
  }

  List<Outcome> subscribe(ResourceType type, String... names) {
    return send(req(type).addAllResourceNamesSubscribe(Arrays.asList(names)));
  }

  List<Outcome> unsubscribe(ResourceType type, String... names) {
    return send(req(type).addAllResourceNamesUnsubscribe(Arrays.asList(names)));
  }

  List<Outcome> ack(ResourceType type) {
    return send(req(type).setResponseNonce(last.get(type).getNonce()));
  }

  List<Outcome> nack(ResourceType type, String message) {
    return send(req(type).setResponseNonce(last.get(type).getNonce())
        .setErrorDetail(com.google.rpc.Status.newBuilder().setCode(3).setMessage(message)));
  }

  List<Outcome> reload(ServedConfig next) {
    Map<String, Map<ResourceType, Set<String>>> changes = new HashMap<>();
    for (String g : next.groupNames()) {
      changes.put(g, next.snapshot(g).changedSince(config.snapshot(g)));
    }
    config = next;
    // The twin gets only the changes that concern it, as from a hub's index (see Concerned).
    List<Outcome> indexed = Concerned.concerns(plain, next, changes)
        ? plain.onConfig(next, changes) : List.of();
    List<Outcome> out = SameOutcomes.check(stream.onConfig(next, changes), indexed);
    record(out);
    return out;
  }

  /** Time passed: the heartbeats and bounded waits that are due. */
  List<Outcome> tick() {
    List<Outcome> out = SameOutcomes.check(stream.onTick(config), plain.onTick(config));
    record(out);
    return out;
  }

  private void record(List<Outcome> out) {
    for (DeltaDiscoveryResponse r : responses(out)) {
      last.put(ResourceType.fromTypeUrl(r.getTypeUrl()).orElseThrow(), r);
    }
  }

  DeltaDiscoveryResponse last(ResourceType type) {
    return last.get(type);
  }

  static List<DeltaDiscoveryResponse> responses(List<Outcome> out) {
    List<DeltaDiscoveryResponse> list = new ArrayList<>();
    for (Outcome o : out) {
      if (o instanceof Outcome.Send s) {
        list.add((DeltaDiscoveryResponse) s.response());
      }
    }
    return list;
  }

  static DeltaDiscoveryResponse single(List<Outcome> out) {
    List<DeltaDiscoveryResponse> r = responses(out);
    assertThat(r).as("exactly one response in %s", out).hasSize(1);
    return r.get(0);
  }

  static List<String> names(DeltaDiscoveryResponse r) {
    return r.getResourcesList().stream().map(Resource::getName).toList();
  }
}
