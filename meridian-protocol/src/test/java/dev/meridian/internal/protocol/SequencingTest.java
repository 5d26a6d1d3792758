package dev.meridian.internal.protocol;

import dev.meridian.xds.ResourceType;

import static dev.meridian.internal.protocol.Fixtures.ADS;
import static dev.meridian.internal.protocol.Fixtures.cluster;
import static dev.meridian.internal.protocol.Fixtures.clusterWithTimeout;
import static dev.meridian.internal.protocol.Fixtures.config;
import static dev.meridian.internal.protocol.Fixtures.endpoints;
import static dev.meridian.internal.protocol.Fixtures.route;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.Rds;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Spec "Eventual consistency considerations" and "Resource warming" on ADS: the sequence one
 * client sees when a change adds a cluster, repoints a route to it and drops the old cluster.
 */
class SequencingTest {
  static final ResourceType CDS = ResourceType.CLUSTER;
  static final ResourceType EDS = ResourceType.ENDPOINT;
  static final ResourceType LDS = ResourceType.LISTENER;
  static final ResourceType RDS = ResourceType.ROUTE;

  static XdsResource listener(String name, String routeConfig) {
    HttpConnectionManager hcm = HttpConnectionManager.newBuilder().setStatPrefix("x")
        .setRds(Rds.newBuilder().setConfigSource(ADS).setRouteConfigName(routeConfig)).build();
    return XdsResource.of(LDS, Listener.newBuilder().setName(name).addFilterChains(FilterChain
        .newBuilder().addFilters(Filter.newBuilder().setName("hcm").setTypedConfig(Any.pack(hcm))))
        .build());
  }

  static final ServedConfig BEFORE = config(cluster("old"), endpoints("old", 1),
      listener("l", "r"), route("r", "old"));
  static final ServedConfig AFTER = config(cluster("new"), endpoints("new", 2),
      listener("l", "r"), route("r", "new"));

  /** One line per response: "CDS [new, old]" or, for Delta, "CDS +[new] -[old]". */
  static List<String> describe(List<Outcome> out) {
    List<String> lines = new ArrayList<>();
    for (Outcome o : out) {
      if (o instanceof Outcome.Send s && s.response() instanceof DiscoveryResponse r) {
        lines.add(s.type().abbreviation() + " " + Fixtures.names(r) + routeTarget(r));
      } else if (o instanceof Outcome.Send s && s.response() instanceof DeltaDiscoveryResponse r) {
        lines.add(s.type().abbreviation() + " +" + DeltaPeer.names(r) + " -" + r.getRemovedResourcesList());
      }
    }
    return lines;
  }

  static String routeTarget(DiscoveryResponse r) {
    if (!r.getTypeUrl().equals(RDS.typeUrl())) {
      return "";
    }
    try {
      return " -> " + r.getResources(0).unpack(RouteConfiguration.class).getVirtualHosts(0)
          .getRoutes(0).getRoute().getCluster();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void sotwAdsClientSeesClustersThenEndpointsThenRoutesThenRemovals() {
    SotwPeer envoy = new SotwPeer(true, null, BEFORE);
    envoy.subscribe(CDS);
    envoy.ack(CDS);
    envoy.subscribe(EDS, "old");
    envoy.ack(EDS, "old");
    envoy.subscribe(LDS);
    envoy.ack(LDS);
    envoy.subscribe(RDS, "r");
    envoy.ack(RDS, "r");

    List<String> seen = new ArrayList<>();
    seen.addAll(describe(envoy.reload(AFTER)));
    // Like Envoy: ACK the clusters, then ask for the new cluster's endpoints while warming.
    seen.addAll(describe(envoy.ack(CDS)));
    seen.addAll(describe(envoy.ack(EDS, "new", "old")));
    seen.addAll(describe(envoy.ack(EDS, "new", "old")));
    seen.addAll(describe(envoy.ack(RDS, "r")));
    seen.addAll(describe(envoy.ack(CDS)));

    assertThat(seen).containsExactly(
        "CDS [new, old]",       // make: the new cluster, the old one kept
        "EDS [new]",            // the new cluster's endpoints, once asked for
        "RDS [r] -> new",       // then the route moves
        "CDS [new]",            // break: the old cluster goes last
        "EDS []");              // "old", still asked for, is gone: said per resource (TP3)
    assertThat(envoy.last(EDS)
        .getResourceErrorsList()).singleElement().satisfies(e -> {
          assertThat(e.getResourceName().getName()).isEqualTo("old");
          assertThat(e.getErrorDetail().getCode()).isEqualTo(5); // NOT_FOUND
        });
  }

  @Test
  void deltaAdsClientSeesTheSameOrderWithRemovalsLast() {
    DeltaPeer envoy = new DeltaPeer(true, null, BEFORE);
    envoy.subscribe(CDS, "*");
    envoy.ack(CDS);
    envoy.subscribe(EDS, "old");
    envoy.ack(EDS);
    envoy.subscribe(LDS, "*");
    envoy.ack(LDS);
    envoy.subscribe(RDS, "r");
    envoy.ack(RDS);

    List<String> seen = new ArrayList<>();
    seen.addAll(describe(envoy.reload(AFTER)));
    seen.addAll(describe(envoy.ack(CDS)));
    seen.addAll(describe(envoy.send(DeltaPeer.req(EDS).addResourceNamesSubscribe("new")
        .setResponseNonce(envoy.last(EDS).getNonce()))));
    seen.addAll(describe(envoy.ack(EDS)));
    seen.addAll(describe(envoy.ack(RDS)));
    seen.addAll(describe(envoy.ack(CDS)));

    assertThat(seen).containsExactly(
        "CDS +[new] -[]",
        "EDS +[new] -[]",
        "RDS +[r] -[]",
        "CDS +[] -[old]",
        "EDS +[] -[old]");
  }

  @Test
  void perTypeStreamsAreNotSequenced() {
    // Separate streams cannot be ordered against each other; each sends at once (docs/protocol.md).
    SotwPeer rds = new SotwPeer(false, RDS, BEFORE);
    rds.subscribe(RDS, "r");
    rds.ack(RDS, "r");
    assertThat(describe(rds.reload(AFTER))).containsExactly("RDS [r] -> new");
    SotwPeer cds = new SotwPeer(false, CDS, BEFORE);
    cds.subscribe(CDS);
    cds.ack(CDS);
    assertThat(describe(cds.reload(AFTER))).containsExactly("CDS [new]");
  }

  @Test
  void endpointsAreResentWhenAWarmingClusterAsksAgain() {
    // Spec "Resource warming": Envoy keeps an updated cluster warming until it gets endpoints,
    // and asks again with the same names and version; unchanged endpoints must still come.
    SotwPeer envoy = new SotwPeer(true, null, config(cluster("c"), endpoints("c", 1)));
    envoy.subscribe(CDS);
    envoy.ack(CDS);
    envoy.subscribe(EDS, "c");
    envoy.ack(EDS, "c");
    assertThat(describe(envoy.reload(config(clusterWithTimeout("c", 9), endpoints("c", 1)))))
        .containsExactly("CDS [c]");
    envoy.ack(CDS);
    assertThat(describe(envoy.ack(EDS, "c"))).containsExactly("EDS [c]");
    // Only once: a further identical request is a plain repeat.
    assertThat(describe(envoy.ack(EDS, "c"))).isEmpty();
  }

  @Test
  void whenEveryClusterChangesEachClientWarmsOnItsOwnThoughTheBookkeepingIsShared() {
    // Clients in sync share what changed and which endpoints to resend (one set for all); one
    // client's warming ask must not use up another's.
    ServedConfig before = config(cluster("a"), cluster("b"), cluster("c"),
        endpoints("a", 1), endpoints("b", 1), endpoints("c", 1));
    ServedConfig after = config(clusterWithTimeout("a", 9), clusterWithTimeout("b", 9),
        clusterWithTimeout("c", 9), endpoints("a", 1), endpoints("b", 1), endpoints("c", 1));
    List<SotwPeer> envoys = List.of(new SotwPeer(true, null, before), new SotwPeer(true, null, before));
    for (SotwPeer envoy : envoys) {
      envoy.subscribe(CDS);
      envoy.ack(CDS);
      envoy.subscribe(EDS, "a", "b", "c");
      envoy.ack(EDS, "a", "b", "c");
    }
    for (SotwPeer envoy : envoys) {
      assertThat(describe(envoy.reload(after))).containsExactly("CDS [a, b, c]");
    }
    SotwPeer first = envoys.get(0);
    SotwPeer second = envoys.get(1);
    first.ack(CDS);
    assertThat(describe(first.ack(EDS, "a", "b", "c"))).containsExactly("EDS [a, b, c]");
    assertThat(describe(first.ack(EDS, "a", "b", "c"))).isEmpty();
    second.ack(CDS);
    assertThat(describe(second.ack(EDS, "a", "b", "c"))).containsExactly("EDS [a, b, c]");
    assertThat(describe(second.ack(EDS, "a", "b", "c"))).isEmpty();
  }

  @Test
  void endpointsSentAfterTheirClusterChangedAreNotResentOnTheNextAsk() {
    // The changed endpoints already went out after the cluster (ADS sequencing): a later endpoint
    // request is a plain request, not a warming ask that needs them again.
    SotwPeer envoy = new SotwPeer(true, null, config(cluster("c"), endpoints("c", 1)));
    envoy.subscribe(CDS);
    envoy.ack(CDS);
    envoy.subscribe(EDS, "c");
    envoy.ack(EDS, "c");
    assertThat(describe(envoy.reload(config(clusterWithTimeout("c", 9), endpoints("c", 2)))))
        .containsExactly("CDS [c]");
    assertThat(describe(envoy.ack(CDS))).containsExactly("EDS [c]");
    assertThat(describe(envoy.ack(EDS, "c"))).isEmpty();
  }

  @Test
  void routesAreResentWhenAWarmingListenerAsksAgain() {
    SotwPeer envoy = new SotwPeer(true, null, config(listener("l", "r"), route("r", "c"), cluster("c")));
    envoy.subscribe(LDS);
    envoy.ack(LDS);
    envoy.subscribe(RDS, "r");
    envoy.ack(RDS, "r");
    XdsResource changed = XdsResource.of(LDS, ((Listener) listener("l", "r").message()).toBuilder()
        .setStatPrefix("changed").build());
    assertThat(describe(envoy.reload(config(changed, route("r", "c"), cluster("c")))))
        .containsExactly("LDS [l]");
    envoy.ack(LDS);
    assertThat(describe(envoy.ack(RDS, "r"))).containsExactly("RDS [r] -> c");
  }

  @Test
  void routesDoNotWaitForeverForEndpointsNobodyAsksFor() {
    MutableClock clock = new MutableClock();
    TwinStream<io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest> s =
        TwinStream.sotwAds(clock);
    // The same scenario on a stream whose clock the test controls; the client never asks for the
    // new cluster's endpoints.
    ServedConfig cfg = BEFORE;
    DiscoveryResponse cds = only(s.onRequest(Fixtures.request(CDS).setNode(Fixtures.node("n")).build(), cfg));
    s.onRequest(Fixtures.request(CDS).setVersionInfo(cds.getVersionInfo()).setResponseNonce(cds.getNonce()).build(), cfg);
    DiscoveryResponse eds = only(s.onRequest(Fixtures.request(EDS, "old").build(), cfg));
    s.onRequest(Fixtures.request(EDS, "old").setVersionInfo(eds.getVersionInfo()).setResponseNonce(eds.getNonce()).build(), cfg);
    DiscoveryResponse rds = only(s.onRequest(Fixtures.request(RDS, "r").build(), cfg));
    s.onRequest(Fixtures.request(RDS, "r").setVersionInfo(rds.getVersionInfo()).setResponseNonce(rds.getNonce()).build(), cfg);
    java.util.Map<String, java.util.Map<ResourceType, java.util.Set<String>>> changes = new java.util.HashMap<>();
    changes.put(ServedConfig.DEFAULT_GROUP, AFTER.defaults().changedSince(BEFORE.defaults()));
    DiscoveryResponse cds2 = only(s.onConfig(AFTER, changes));
    s.onRequest(Fixtures.request(CDS).setVersionInfo(cds2.getVersionInfo()).setResponseNonce(cds2.getNonce()).build(), AFTER);
    assertThat(s.wantsTick()).isTrue();
    assertThat(s.onTick(AFTER)).isEmpty();
    clock.advance(XdsStream.AWAIT_ENDPOINTS_LIMIT.plusSeconds(1));
    assertThat(describe(s.onTick(AFTER))).containsExactly("RDS [r] -> new");
    assertThat(s.wantsTick()).isFalse();
  }

  static DiscoveryResponse only(List<Outcome> out) {
    return SotwPeer.single(out);
  }
}
