package dev.meridian.internal.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GrpcProfileTest {
  static final String HCM = "type.googleapis.com/envoy.extensions.filters.network"
      + ".http_connection_manager.v3.HttpConnectionManager";
  static final String ROUTER = "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router";
  static final String ADS = "{ads: {}, resource_api_version: V3}";

  @TempDir Path dir;

  List<GrpcProfile.Finding> check(String... resources) throws Exception {
    Path file = dir.resolve("c.yaml");
    Files.writeString(file, "resources:\n" + String.join("", resources));
    // grpc-java's rules are under test; Envoy's (a stat_prefix, ...) are checked elsewhere
    return GrpcProfile.check(new ConfigLoader(RuleCheck.OFF).load(file).config());
  }

  static String listener(String filters) {
    return "- {'@type': type.googleapis.com/envoy.config.listener.v3.Listener, name: greeter,"
        + " api_listener: {api_listener: {'@type': " + HCM + ", rds: {route_config_name: r,"
        + " config_source: " + ADS + "}, http_filters: " + filters + "}}}\n";
  }

  static final String ROUTER_ONLY = "[{name: router, typed_config: {'@type': " + ROUTER + "}}]";

  static String routes(String route) {
    return "- {'@type': type.googleapis.com/envoy.config.route.v3.RouteConfiguration, name: r,"
        + " virtual_hosts: [{name: all, domains: ['*'], routes: [" + route + "]}]}\n";
  }

  static String cluster(String extra) {
    return "- {'@type': type.googleapis.com/envoy.config.cluster.v3.Cluster, name: c,"
        + " eds_cluster_config: {eds_config: " + ADS + "}" + extra + "}\n";
  }

  static String endpoints(String locality) {
    return "- {'@type': type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment,"
        + " cluster_name: c, endpoints: [" + locality + "]}\n";
  }

  static String locality(String weight, String address) {
    return "{locality: {region: r}" + weight + ", lb_endpoints: [{endpoint: {address: {socket_address:"
        + " {address: " + address + ", port_value: 50051}}}}]}";
  }

  @Test
  void aConfigGrpcJavaAcceptsHasNoFindings() throws Exception {
    assertThat(check(listener(ROUTER_ONLY), routes("{match: {prefix: ''}, route: {cluster: c}}"),
        cluster(", type: EDS, lb_policy: ROUND_ROBIN"),
        endpoints(locality(", load_balancing_weight: 1", "127.0.0.1")))).isEmpty();
  }

  @Test
  void unsupportedLbPolicyIsAnErrorNamingClusterAndField() throws Exception {
    assertThat(check(cluster(", type: EDS, lb_policy: MAGLEV"))).singleElement().satisfies(f -> {
      assertThat(f.severity()).isEqualTo(GrpcProfile.Severity.ERROR);
      assertThat(f.type()).isEqualTo("Cluster");
      assertThat(f.resource()).isEqualTo("c");
      assertThat(f.field()).isEqualTo("lb_policy");
      assertThat(f.toString()).contains("MAGLEV");
    });
  }

  @Test
  void staticClusterTypeIsAnError() throws Exception {
    assertThat(check(cluster(", type: STATIC"))).extracting(GrpcProfile.Finding::field)
        .containsExactly("type");
  }

  @Test
  void localityWithoutWeightIsAWarningAndHostnameEndpointAnError() throws Exception {
    List<GrpcProfile.Finding> f = check(endpoints(locality("", "backend.internal")));
    assertThat(f).extracting(GrpcProfile.Finding::field, GrpcProfile.Finding::severity).containsExactly(
        org.assertj.core.groups.Tuple.tuple("endpoints[0].load_balancing_weight",
            GrpcProfile.Severity.WARNING),
        org.assertj.core.groups.Tuple.tuple(
            "endpoints[0].lb_endpoints[0].endpoint.address.socket_address.address",
            GrpcProfile.Severity.ERROR));
  }

  @Test
  void ipv6EndpointIsAnIpLiteral() {
    assertThat(GrpcProfile.isIpLiteral("::1")).isTrue();
    assertThat(GrpcProfile.isIpLiteral("10.0.0.1")).isTrue();
    assertThat(GrpcProfile.isIpLiteral("localhost")).isFalse();
  }

  @Test
  void hcmWithoutRouterLastIsAnError() throws Exception {
    String fault = "{name: fault, typed_config: {'@type': "
        + "type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault}}";
    assertThat(check(listener("[{name: router, typed_config: {'@type': " + ROUTER + "}}, " + fault + "]")))
        .extracting(GrpcProfile.Finding::field, GrpcProfile.Finding::severity).containsExactly(
            org.assertj.core.groups.Tuple.tuple("api_listener.api_listener.http_filters[0]",
                GrpcProfile.Severity.ERROR),
            org.assertj.core.groups.Tuple.tuple("api_listener.api_listener.http_filters[1]",
                GrpcProfile.Severity.ERROR));
    assertThat(check(listener("[]"))).extracting(GrpcProfile.Finding::field)
        .containsExactly("api_listener.api_listener.http_filters");
  }

  @Test
  void routeActionsGrpcCannotDoAreReported() throws Exception {
    List<GrpcProfile.Finding> f = check(routes(
        "{match: {prefix: /a}, redirect: {host_redirect: x}},"
            + " {match: {prefix: /b}, route: {cluster_header: x-cluster}},"
            + " {match: {prefix: /c}, route: {cluster: c, prefix_rewrite: /d}},"
            + " {match: {prefix: /e}, route: {weighted_clusters: {clusters: [{name: c, weight: 0}]}}}"));
    assertThat(f).extracting(GrpcProfile.Finding::field, GrpcProfile.Finding::severity).containsExactly(
        org.assertj.core.groups.Tuple.tuple("virtual_hosts[0].routes[0].redirect", GrpcProfile.Severity.ERROR),
        org.assertj.core.groups.Tuple.tuple("virtual_hosts[0].routes[1].route.cluster_header",
            GrpcProfile.Severity.WARNING),
        org.assertj.core.groups.Tuple.tuple("virtual_hosts[0].routes[2].route.prefix_rewrite",
            GrpcProfile.Severity.WARNING),
        org.assertj.core.groups.Tuple.tuple("virtual_hosts[0].routes[3].route.weighted_clusters",
            GrpcProfile.Severity.ERROR));
  }

  @Test
  void serverListenerRoutesNeedNonForwardingAction() throws Exception {
    String l = "- {'@type': type.googleapis.com/envoy.config.listener.v3.Listener, name: s,"
        + " address: {socket_address: {address: 0.0.0.0, port_value: 8080}}, filter_chains: [{filters:"
        + " [{name: hcm, typed_config: {'@type': " + HCM + ", route_config: {name: in, virtual_hosts:"
        + " [{name: in, domains: ['*'], routes: [{match: {prefix: ''}, route: {cluster: c}}]}]},"
        + " http_filters: " + ROUTER_ONLY + "}}]}]}\n";
    assertThat(check(l)).singleElement().satisfies(f -> {
      assertThat(f.field()).isEqualTo(
          "filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0]");
      assertThat(f.message()).contains("non_forwarding_action");
    });
  }

  @Test
  void routesFetchedOverRdsByAServerListenerAreCheckedAsServerRoutes() throws Exception {
    String l = "- {'@type': type.googleapis.com/envoy.config.listener.v3.Listener, name: s,"
        + " address: {socket_address: {address: 0.0.0.0, port_value: 8080}}, filter_chains: [{filters:"
        + " [{name: hcm, typed_config: {'@type': " + HCM + ", rds: {route_config_name: r,"
        + " config_source: " + ADS + "}, http_filters: " + ROUTER_ONLY + "}}]}]}\n";
    assertThat(check(l, routes("{match: {prefix: ''}, non_forwarding_action: {}}"))).isEmpty();
    assertThat(check(l, routes("{match: {prefix: ''}, route: {cluster: c}}")))
        .extracting(GrpcProfile.Finding::type, GrpcProfile.Finding::field)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("RouteConfiguration",
            "virtual_hosts[0].routes[0]"));
    // The same route config used by a client is a client route: non_forwarding_action is wrong there.
    assertThat(check(routes("{match: {prefix: ''}, non_forwarding_action: {}}")))
        .extracting(GrpcProfile.Finding::field)
        .containsExactly("virtual_hosts[0].routes[0].non_forwarding_action");
  }
}
