package dev.meridian.client;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.BoolValue;
import com.google.protobuf.UInt32Value;
import io.envoyproxy.envoy.config.core.v3.HealthStatus;
import io.envoyproxy.envoy.config.core.v3.RuntimeFractionalPercent;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.envoyproxy.envoy.config.route.v3.HeaderMatcher;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.RouteMatch;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.type.matcher.v3.RegexMatcher;
import io.envoyproxy.envoy.type.matcher.v3.StringMatcher;
import io.envoyproxy.envoy.type.v3.FractionalPercent;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Routing decisions of gRFC A28 (route matching) and A27 (domains, weights, priorities). */
class RoutingTableTest {
  private static VirtualHost vh(String name, String... domains) {
    return VirtualHost.newBuilder().setName(name).addAllDomains(List.of(domains)).build();
  }

  @Test
  void mostSpecificDomainWins() {
    List<VirtualHost> hosts = List.of(vh("any", "*"), vh("prefix", "foo.*"),
        vh("suffix", "*.example.com"), vh("longer-suffix", "*.bar.example.com"),
        vh("exact", "foo.example.com"));
    assertThat(RoutingTable.virtualHost(hosts, "foo.example.com").get().getName()).isEqualTo("exact");
    assertThat(RoutingTable.virtualHost(hosts, "x.bar.example.com").get().getName())
        .isEqualTo("longer-suffix");
    assertThat(RoutingTable.virtualHost(hosts, "baz.example.com").get().getName()).isEqualTo("suffix");
    assertThat(RoutingTable.virtualHost(hosts, "foo.org").get().getName()).isEqualTo("prefix");
    assertThat(RoutingTable.virtualHost(hosts, "other").get().getName()).isEqualTo("any");
    assertThat(RoutingTable.virtualHost(List.of(vh("x", "a")), "b")).isEmpty();
  }

  @Test
  void pathMatchers() {
    assertThat(RoutingTable.matches(RouteMatch.newBuilder().setPrefix("/pkg.").build(),
        "/pkg.Svc/M", Map.of(), () -> 0)).isTrue();
    assertThat(RoutingTable.matches(RouteMatch.newBuilder().setPrefix("/PKG.")
        .setCaseSensitive(BoolValue.of(false)).build(), "/pkg.Svc/M", Map.of(), () -> 0)).isTrue();
    assertThat(RoutingTable.matches(RouteMatch.newBuilder().setPath("/pkg.Svc/M").build(),
        "/pkg.Svc/Other", Map.of(), () -> 0)).isFalse();
    assertThat(RoutingTable.matches(RouteMatch.newBuilder().setSafeRegex(
        RegexMatcher.newBuilder().setRegex("/pkg\\.Svc/(A|B)")).build(), "/pkg.Svc/B", Map.of(),
        () -> 0)).isTrue();
  }

  @Test
  void headerMatchersIncludingInvertAndPresence() {
    RouteMatch m = RouteMatch.newBuilder().setPrefix("/")
        .addHeaders(HeaderMatcher.newBuilder().setName("env").setStringMatch(
            StringMatcher.newBuilder().setExact("canary")))
        .addHeaders(HeaderMatcher.newBuilder().setName("debug").setPresentMatch(true)
            .setInvertMatch(true))
        .build();
    assertThat(RoutingTable.matches(m, "/x", Map.of("env", "canary"), () -> 0)).isTrue();
    assertThat(RoutingTable.matches(m, "/x", Map.of("env", "canary", "debug", "1"), () -> 0)).isFalse();
    assertThat(RoutingTable.matches(m, "/x", Map.of("env", "prod"), () -> 0)).isFalse();
    assertThat(RoutingTable.matches(m, "/x", Map.of(), () -> 0)).isFalse();
  }

  @Test
  void runtimeFractionUsesTheRandomSource() {
    RouteMatch m = RouteMatch.newBuilder().setPrefix("/").setRuntimeFraction(
        RuntimeFractionalPercent.newBuilder().setDefaultValue(FractionalPercent.newBuilder()
            .setNumerator(25))).build();
    assertThat(RoutingTable.matches(m, "/", Map.of(), () -> 0.24)).isTrue();
    assertThat(RoutingTable.matches(m, "/", Map.of(), () -> 0.25)).isFalse();
  }

  @Test
  void firstMatchingRouteAndWeightedClusterPick() {
    RouteConfiguration rc = RouteConfiguration.newBuilder().setName("rc").addVirtualHosts(
        VirtualHost.newBuilder().setName("vh").addDomains("*")
            .addRoutes(Route.newBuilder().setMatch(RouteMatch.newBuilder().setPath("/a.S/M"))
                .setRoute(RouteAction.newBuilder().setCluster("exact")))
            .addRoutes(Route.newBuilder().setMatch(RouteMatch.newBuilder().setPrefix("/"))
                .setRoute(RouteAction.newBuilder().setWeightedClusters(
                    TestResources.weighted("v1", 80, "v2", 20))))).build();
    RoutingTable t = new RoutingTable("l", false, "rc", rc,
        Map.of("v1", TestResources.edsCluster("v1"), "v2", TestResources.edsCluster("v2")),
        Map.of("v1", TestResources.endpoints("v1", 1), "v2", TestResources.endpoints("v2", 2)),
        Set.of());
    RoutingTable.Resolution low = t.resolve("svc", "/b.S/M", Map.of(), () -> 0.79);
    assertThat(low.ok()).isTrue();
    assertThat(low.cluster()).isEqualTo("v1");
    assertThat(low.clusters()).extracting(RoutingTable.WeightedChoice::weight).containsExactly(80, 20);
    assertThat(low.endpoint().getPortValue()).isEqualTo(1);
    assertThat(t.resolve("svc", "/b.S/M", Map.of(), () -> 0.81).cluster()).isEqualTo("v2");
    RoutingTable.Resolution exact = t.resolve("svc", "/a.S/M", Map.of(), () -> 0.5);
    assertThat(exact.ok()).isFalse();
    assertThat(exact.problem()).isEqualTo("cluster exact not yet received");
  }

  @Test
  void endpointPickPrefersTheLowestUsablePriority() {
    ClusterLoadAssignment cla = ClusterLoadAssignment.newBuilder().setClusterName("c")
        .addEndpoints(TestResources.endpoints("c", 1).getEndpoints(0).toBuilder().setPriority(0)
            .setLbEndpoints(0, TestResources.endpoints("c", 1).getEndpoints(0).getLbEndpoints(0)
                .toBuilder().setHealthStatus(HealthStatus.UNHEALTHY)))
        .addEndpoints(TestResources.endpoints("c", 2).getEndpoints(0).toBuilder().setPriority(1)
            .setLoadBalancingWeight(UInt32Value.of(1)))
        .build();
    assertThat(RoutingTable.pickEndpoint(cla, () -> 0.1).getPortValue()).isEqualTo(2);
    assertThat(RoutingTable.pickEndpoint(ClusterLoadAssignment.newBuilder()
        .addEndpoints(LocalityLbEndpoints.getDefaultInstance()).build(), () -> 0.1)).isNull();
  }
}
