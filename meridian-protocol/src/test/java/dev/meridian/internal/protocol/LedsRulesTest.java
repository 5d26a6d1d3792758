package dev.meridian.internal.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.xds.ResourceType;

import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.Endpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LedsClusterLocalityConfig;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Envoy's LEDS (issue 26), in the core: a ClusterLoadAssignment whose locality says
 * {@code leds_cluster_locality_config} (envoy/config/endpoint/v3/endpoint_components.proto) and
 * the {@code envoy.config.endpoint.v3.LbEndpoint} resources of its glob collection, served over
 * Incremental xDS only (envoy/service/endpoint/v3/leds.proto: "State-of-the-World
 * (DiscoveryRequest) and REST are not supported"), on Delta ADS and on the per-type
 * {@code DeltaLocalityEndpoints}.
 */
class LedsRulesTest {
  private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC);
  private static final String EP = "xdstp://mesh.example/envoy.config.endpoint.v3.LbEndpoint/";
  private static final String ZONE_A = EP + "backend/zone-a/*";

  enum Variant { DELTA_ADS, DELTA_PER_TYPE }

  /** A Delta client: on ADS it asks for several types on one stream. */
  static final class DeltaClient extends VariantClient {
    private boolean sentNode;

    DeltaClient(Variant v, ServedConfig config) {
      super(v == Variant.DELTA_ADS ? TwinStream.deltaAds(CLOCK)
          : TwinStream.deltaPerType(ResourceType.LB_ENDPOINT, CLOCK), config);
    }

    List<Outcome> ask(ResourceType type, String... names) {
      return send(type, Arrays.asList(names), List.of());
    }

    List<Outcome> drop(ResourceType type, String... names) {
      return send(type, List.of(), Arrays.asList(names));
    }

    List<Outcome> ack(ResourceType type) {
      return send(type, List.of(), List.of());
    }

    @SuppressWarnings("unchecked")
    private List<Outcome> send(ResourceType type, List<String> sub, List<String> unsub) {
      DeltaDiscoveryRequest.Builder b = DeltaDiscoveryRequest.newBuilder()
          .setTypeUrl(type.typeUrl()).setResponseNonce(lastNonce)
          .addAllResourceNamesSubscribe(sub).addAllResourceNamesUnsubscribe(unsub);
      if (!sentNode) {
        b.setNode(Fixtures.node("envoy-1"));
        sentNode = true;
      }
      List<Outcome> out = ((TwinStream<DeltaDiscoveryRequest>) twin).onRequest(b.build(), config);
      remember(out);
      return out;
    }
  }

  static XdsResource endpoint(String name, int port) {
    return XdsResource.named(ResourceType.LB_ENDPOINT, name, LbEndpoint.newBuilder()
        .setEndpoint(Endpoint.newBuilder().setAddress(Address.newBuilder().setSocketAddress(
            SocketAddress.newBuilder().setAddress("10.0.0.1").setPortValue(port))))
        .build());
  }

  /** A CLA whose one locality gets its endpoints from {@code collection} (LEDS). */
  static XdsResource ledsCla(String cluster, String collection) {
    return XdsResource.of(ResourceType.ENDPOINT, ClusterLoadAssignment.newBuilder()
        .setClusterName(cluster)
        .addEndpoints(LocalityLbEndpoints.newBuilder().setLedsClusterLocalityConfig(
            LedsClusterLocalityConfig.newBuilder().setLedsConfig(Fixtures.ADS)
                .setLedsCollectionName(collection)))
        .build());
  }

  static ServedConfig config(XdsResource... resources) {
    return Fixtures.config(resources);
  }

  static List<Resource> resources(List<Outcome> out) {
    List<Resource> all = new ArrayList<>();
    for (Outcome o : out) {
      if (o instanceof Outcome.Send s && s.response() instanceof DeltaDiscoveryResponse r) {
        all.addAll(r.getResourcesList());
      }
    }
    return all;
  }

  static List<String> sent(List<Outcome> out) {
    return resources(out).stream().map(Resource::getName).toList();
  }

  @Test
  void deltaAdsClientGetsTheLedsClaThenEachLbEndpointOfItsGlobWithItsFullName()
      throws InvalidProtocolBufferException {
    DeltaClient c = new DeltaClient(Variant.DELTA_ADS, config(ledsCla("backend", ZONE_A),
        endpoint(EP + "backend/zone-a/10.0.0.1:8080", 8080),
        endpoint(EP + "backend/zone-a/10.0.0.2:8080", 8081),
        endpoint(EP + "backend/zone-b/10.0.0.3:8080", 8082)));
    // Envoy asks for the cluster's CLA (EDS), and, once it reads the LEDS locality, for its
    // collection on the LbEndpoint type.
    List<Resource> cla = resources(c.ask(ResourceType.ENDPOINT, "backend"));
    assertThat(cla).extracting(Resource::getName).containsExactly("backend");
    c.ack(ResourceType.ENDPOINT);
    List<Resource> members = resources(c.ask(ResourceType.LB_ENDPOINT, ZONE_A));
    assertThat(members).extracting(Resource::getName).containsExactly(
        EP + "backend/zone-a/10.0.0.1:8080", EP + "backend/zone-a/10.0.0.2:8080");
    for (Resource r : members) {
      assertThat(r.getResource().getTypeUrl()).isEqualTo(ResourceType.LB_ENDPOINT.typeUrl());
      assertThat(r.getVersion()).isNotEmpty();
    }
    assertThat(members.get(1).getResource().unpack(LbEndpoint.class).getEndpoint().getAddress()
        .getSocketAddress().getPortValue()).isEqualTo(8081);
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void lbEndpointAddedOrRemovedInTheConfigReachesTheClientAsADeltaAddOrRemove(Variant v) {
    XdsResource cla = ledsCla("backend", ZONE_A);
    XdsResource one = endpoint(EP + "backend/zone-a/one", 1);
    XdsResource two = endpoint(EP + "backend/zone-a/two", 2);
    DeltaClient c = new DeltaClient(v, config(cla, one));
    assertThat(sent(c.ask(ResourceType.LB_ENDPOINT, ZONE_A))).containsExactly(one.name());
    c.ack(ResourceType.LB_ENDPOINT);
    List<Outcome> out = c.reload(config(cla, one, two));
    assertThat(sent(out)).containsExactly(two.name());
    assertThat(FederationRulesTest.removed(out)).isEmpty();
    c.ack(ResourceType.LB_ENDPOINT);
    out = c.reload(config(cla, two));
    assertThat(sent(out)).isEmpty();
    assertThat(FederationRulesTest.removed(out)).containsExactly(one.name());
    assertThat(FederationRulesTest.errors(out)).isEmpty(); // a member, not a name asked for
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void changedLbEndpointIsSentAgainAndAnUnchangedOneIsNot(Variant v) {
    XdsResource cla = ledsCla("backend", ZONE_A);
    DeltaClient c = new DeltaClient(v, config(cla, endpoint(EP + "backend/zone-a/one", 1),
        endpoint(EP + "backend/zone-a/two", 2)));
    c.ask(ResourceType.LB_ENDPOINT, ZONE_A);
    c.ack(ResourceType.LB_ENDPOINT);
    assertThat(sent(c.reload(config(cla, endpoint(EP + "backend/zone-a/one", 1),
        endpoint(EP + "backend/zone-a/two", 22))))).containsExactly(EP + "backend/zone-a/two");
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void emptyLedsLocalitySendsNothingAndIsNotReportedMissing(Variant v) {
    DeltaClient c = new DeltaClient(v, config(ledsCla("backend", ZONE_A),
        endpoint(EP + "backend/zone-b/x", 1)));
    List<Outcome> out = c.ask(ResourceType.LB_ENDPOINT, ZONE_A);
    assertThat(sent(out)).isEmpty();
    assertThat(FederationRulesTest.errors(out)).isEmpty(); // the collection is not a resource
    // Its first member, when the config gets one, is an add.
    assertThat(sent(c.reload(config(ledsCla("backend", ZONE_A), endpoint(EP + "backend/zone-a/y",
        2))))).containsExactly(EP + "backend/zone-a/y");
  }

  @Test
  void sotwAdsRequestForLbEndpointsEndsTheStreamAsOneForVirtualHostsDoes() {
    for (ResourceType type : List.of(ResourceType.LB_ENDPOINT, ResourceType.VIRTUAL_HOST)) {
      TwinStream<DiscoveryRequest> s = TwinStream.sotwAds(CLOCK);
      Outcome.Close close = FederationRulesTest.closed(s.onRequest(DiscoveryRequest.newBuilder()
          .setNode(Fixtures.node("envoy-1")).setTypeUrl(type.typeUrl()).addResourceNames(ZONE_A)
          .build(), config(endpoint(EP + "backend/zone-a/one", 1))));
      assertThat(close).isNotNull();
      assertThat(close.code()).isEqualTo(Outcome.CloseCode.INVALID_ARGUMENT);
      assertThat(close.message()).contains(type.typeUrl(), "only over Incremental xDS",
          type == ResourceType.LB_ENDPOINT ? "DeltaLocalityEndpoints" : "DeltaVirtualHosts");
    }
  }

  @Test
  void ledsNamingRules() {
    assertThat(Leds.problemAsEndpointName(EP + "backend/zone-a/one")).isNull();
    assertThat(Leds.problemAsEndpointName("one")).contains("xdstp://AUTHORITY/"
        + "envoy.config.endpoint.v3.LbEndpoint/PATH/NAME");
    assertThat(Leds.problemAsEndpointName(ZONE_A)).contains("glob collection");
    assertThat(Leds.problemAsEndpointName(
        "xdstp://mesh.example/envoy.config.cluster.v3.Cluster/a")).contains("type segment");
    assertThat(Leds.problemAsCollectionName(ZONE_A)).isNull();
    assertThat(Leds.problemAsCollectionName(EP + "backend/zone-a/one"))
        .contains("not a glob collection");
    assertThat(Leds.problemAsCollectionName(
        "xdstp://mesh.example/envoy.config.endpoint.v3.ClusterLoadAssignment/a/*"))
        .contains("type segment 'envoy.config.endpoint.v3.ClusterLoadAssignment'");
    assertThat(Leds.problemAsCollectionName("zone-a")).contains("not an xdstp name");
    assertThat(Leds.problemAsCollectionName(EP + "a/*?b=1&a=2")).contains("write it as "
        + EP + "a/*?a=2&b=1");
  }
}
