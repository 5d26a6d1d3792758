package dev.meridian.internal.pgv;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Duration;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.Struct;
import com.google.protobuf.UInt32Value;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.AggregatedConfigSource;
import io.envoyproxy.envoy.config.core.v3.ConfigSource;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.config.core.v3.HeaderValueOption;
import io.envoyproxy.envoy.config.core.v3.HealthCheck;
import io.envoyproxy.envoy.config.core.v3.Metadata;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.Endpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.RouteMatch;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.extensions.filters.http.router.v3.Router;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.Rds;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Envoy's own rules, read off its generated API, on the resources a control plane serves. */
class PgvEnvoyRulesTest {
  private static final Map<String, Descriptor> PACKABLE = Map.of(
      "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
      HttpConnectionManager.getDescriptor(),
      "envoy.extensions.filters.http.router.v3.Router", Router.getDescriptor());

  private final List<String> looked = new ArrayList<>();
  private final PgvRules rules = new PgvRules(url -> {
    looked.add(url);
    return PACKABLE.get(url.substring(url.lastIndexOf('/') + 1));
  }, Clock.systemUTC());

  private static Cluster.Builder cluster() {
    return Cluster.newBuilder().setName("backend").setType(Cluster.DiscoveryType.STRICT_DNS)
        .setConnectTimeout(Duration.newBuilder().setSeconds(1))
        .setLoadAssignment(ClusterLoadAssignment.newBuilder().setClusterName("backend")
            .addEndpoints(LocalityLbEndpoints.newBuilder().addLbEndpoints(endpoint(8080))));
  }

  private static LbEndpoint.Builder endpoint(int port) {
    return LbEndpoint.newBuilder().setEndpoint(Endpoint.newBuilder().setAddress(
        Address.newBuilder().setSocketAddress(
            SocketAddress.newBuilder().setAddress("backend.internal").setPortValue(port))));
  }

  private static Route.Builder route() {
    return Route.newBuilder().setMatch(RouteMatch.newBuilder().setPrefix("/"))
        .setRoute(RouteAction.newBuilder().setCluster("backend"));
  }

  private static HttpConnectionManager.Builder hcm() {
    return HttpConnectionManager.newBuilder().setStatPrefix("ingress")
        .setRds(Rds.newBuilder().setRouteConfigName("routes").setConfigSource(
            ConfigSource.newBuilder().setAds(AggregatedConfigSource.getDefaultInstance())))
        .addHttpFilters(HttpFilter.newBuilder().setName("envoy.filters.http.router")
            .setTypedConfig(Any.pack(Router.getDefaultInstance())));
  }

  private static Listener listenerWith(Any typedConfig) {
    return Listener.newBuilder().setName("ingress")
        .setAddress(Address.newBuilder().setSocketAddress(
            SocketAddress.newBuilder().setAddress("0.0.0.0").setPortValue(10000)))
        .addFilterChains(FilterChain.newBuilder().addFilters(
            Filter.newBuilder().setName("hcm").setTypedConfig(typedConfig)))
        .build();
  }

  @Test
  void aWellFormedClusterListenerAndRouteConfigurationBreakNoRule() {
    assertThat(rules.check(cluster().build())).isEmpty();
    assertThat(rules.check(listenerWith(Any.pack(hcm().build())))).isEmpty();
    assertThat(rules.check(RouteConfiguration.newBuilder().setName("routes").addVirtualHosts(
        VirtualHost.newBuilder().setName("all").addDomains("*").addRoutes(route())).build()))
        .isEmpty();
  }

  @Test
  void aClusterWithANegativeConnectTimeoutBreaksDurationGt() {
    List<Violation> found = rules.check(
        cluster().setConnectTimeout(Duration.newBuilder().setSeconds(-1)).build());

    assertThat(found).singleElement().satisfies(v -> {
      assertThat(v.path()).containsExactly(new Step.Field("connect_timeout"));
      assertThat(v.value()).isEqualTo("-1s");
      assertThat(v.rule()).isEqualTo("duration.gt");
      assertThat(v.reason()).isEqualTo("must be greater than 0s");
    });
    assertThat(found.get(0)).hasToString(
        "connect_timeout: -1s must be greater than 0s (duration.gt)");
  }

  @Test
  void aFractionalDurationIsWrittenAsProto3JsonWritesIt() {
    List<Violation> found = rules.check(cluster().setConnectTimeout(
        Duration.newBuilder().setSeconds(-1).setNanos(-500_000_000)).build());

    assertThat(found).extracting(Violation::value).containsExactly("-1.500s");
  }

  @Test
  void aClusterLoadAssignmentWithPort99999BreaksUint32Lte() {
    ClusterLoadAssignment cla = ClusterLoadAssignment.newBuilder().setClusterName("backend")
        .addEndpoints(LocalityLbEndpoints.newBuilder().addLbEndpoints(endpoint(8080))
            .addLbEndpoints(endpoint(99999)))
        .build();

    List<Violation> found = rules.check(cla);

    assertThat(found).singleElement().satisfies(v -> {
      assertThat(v.field())
          .isEqualTo("endpoints[0].lb_endpoints[1].endpoint.address.socket_address.port_value");
      assertThat(v.value()).isEqualTo("99999");
      assertThat(v.rule()).isEqualTo("uint32.lte");
      assertThat(v.reason()).isEqualTo("must be at most 65535");
    });
  }

  @Test
  void aVirtualHostWithoutDomainsBreaksRepeatedMinItems() {
    RouteConfiguration rc = RouteConfiguration.newBuilder().setName("routes").addVirtualHosts(
        VirtualHost.newBuilder().setName("all").addRoutes(route())).build();

    assertThat(rules.check(rc)).singleElement().hasToString(
        "virtual_hosts[0].domains: [] must have at least 1 item (repeated.min_items)");
  }

  @Test
  void aRouteWithoutAnActionBreaksOneofRequiredNamingTheOneof() {
    RouteConfiguration rc = RouteConfiguration.newBuilder().setName("routes").addVirtualHosts(
        VirtualHost.newBuilder().setName("all").addDomains("*")
            .addRoutes(route().clearRoute())).build();

    assertThat(rules.check(rc)).singleElement().satisfies(v -> {
      assertThat(v.field()).isEqualTo("virtual_hosts[0].routes[0].action");
      assertThat(v.value()).isNull();
      assertThat(v.rule()).isEqualTo("oneof.required");
      assertThat(v.reason()).startsWith("is required: set one of route, redirect");
    });
  }

  @Test
  void anHttpConnectionManagerInAListenerFilterWithoutStatPrefixBreaksStringMinLen() {
    List<Violation> found = rules.check(listenerWith(Any.pack(hcm().clearStatPrefix().build())));

    // the packed message adds no step: its fields sit beside @type
    assertThat(found).singleElement().hasToString(
        "filter_chains[0].filters[0].typed_config.stat_prefix: \"\" must be at least 1 character"
            + " long (string.min_len)");
  }

  @Test
  void anAnyInsideAnAnyIsCheckedToo() {
    HttpConnectionManager inner = hcm().setHttpFilters(0, HttpFilter.newBuilder().setName("")
        .setTypedConfig(Any.pack(Router.getDefaultInstance()))).build();

    assertThat(rules.check(listenerWith(Any.pack(inner)))).extracting(Violation::field)
        .containsExactly("filter_chains[0].filters[0].typed_config.http_filters[0].name");
  }

  @Test
  void anAnyOfAnUnknownTypeIsNotLookedInto() {
    Any unknown = Any.newBuilder().setTypeUrl("type.googleapis.com/no.such.Filter")
        .setValue(ByteString.copyFromUtf8("\u00ff\u00ff not a message")).build();

    assertThat(rules.check(listenerWith(unknown))).isEmpty();
    assertThat(looked).containsExactly("type.googleapis.com/no.such.Filter");
  }

  @Test
  void anAnyWhoseBytesAreNotItsTypeIsOneViolation() {
    Any broken = Any.newBuilder().setTypeUrl("type.googleapis.com/"
            + HttpConnectionManager.getDescriptor().getFullName())
        .setValue(ByteString.copyFrom(new byte[] {(byte) 0x0a, (byte) 0x7f})).build();

    assertThat(rules.check(listenerWith(broken))).singleElement().satisfies(v -> {
      assertThat(v.field()).isEqualTo("filter_chains[0].filters[0].typed_config");
      assertThat(v.rule()).isEqualTo("any.type_url");
      assertThat(v.reason()).contains("not a valid " + HttpConnectionManager.getDescriptor()
          .getFullName());
    });
  }

  @Test
  void everyViolationIsReportedInFieldOrderNotJustTheFirst() {
    Cluster c = cluster().setName("").setConnectTimeout(Duration.newBuilder().setSeconds(-1))
        .setLbPolicyValue(42)
        .setLoadAssignment(ClusterLoadAssignment.newBuilder().setClusterName("backend")
            .addEndpoints(LocalityLbEndpoints.newBuilder().addLbEndpoints(endpoint(70000))
                .addLbEndpoints(endpoint(80000))))
        .build();

    assertThat(rules.check(c)).extracting(Violation::field, Violation::rule).containsExactly(
        org.assertj.core.groups.Tuple.tuple("name", "string.min_len"),
        org.assertj.core.groups.Tuple.tuple("connect_timeout", "duration.gt"),
        org.assertj.core.groups.Tuple.tuple("lb_policy", "enum.defined_only"),
        org.assertj.core.groups.Tuple.tuple(
            "load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address"
                + ".port_value", "uint32.lte"),
        org.assertj.core.groups.Tuple.tuple(
            "load_assignment.endpoints[0].lb_endpoints[1].endpoint.address.socket_address"
                + ".port_value", "uint32.lte"));
  }

  @Test
  void anUndefinedEnumNumberIsWrittenAsItsNumber() {
    assertThat(rules.check(cluster().setLbPolicyValue(42).build())).singleElement()
        .satisfies(v -> {
          assertThat(v.value()).isEqualTo("42");
          assertThat(v.rule()).isEqualTo("enum.defined_only");
        });
  }

  @Test
  void aHeaderNameWithANewlineBreaksTheWellKnownHeaderRegex() {
    RouteConfiguration rc = RouteConfiguration.newBuilder().setName("routes").addVirtualHosts(
        VirtualHost.newBuilder().setName("all").addDomains("*").addRoutes(route())
            .addRequestHeadersToAdd(HeaderValueOption.newBuilder().setHeader(
                HeaderValue.newBuilder().setKey("x-bad\nname").setValue("v")))).build();

    assertThat(rules.check(rc)).singleElement().satisfies(v -> {
      assertThat(v.field()).isEqualTo("virtual_hosts[0].request_headers_to_add[0].header.key");
      assertThat(v.value()).isEqualTo("\"x-bad\\nname\"");
      assertThat(v.rule()).isEqualTo("string.well_known_regex");
    });
  }

  @Test
  void aHealthCheckWithoutItsRequiredWrapperBreaksMessageRequired() {
    HealthCheck hc = HealthCheck.newBuilder().setTimeout(Duration.newBuilder().setSeconds(1))
        .setInterval(Duration.newBuilder().setSeconds(5))
        .setUnhealthyThreshold(UInt32Value.of(3))
        .setTcpHealthCheck(HealthCheck.TcpHealthCheck.getDefaultInstance()).build();

    assertThat(rules.check(cluster().addHealthChecks(hc).build())).singleElement()
        .hasToString("health_checks[0].healthy_threshold: is required (message.required)");
  }

  @Test
  void theSameConfigInDescriptorsBuiltAtRunTimeBreaksTheSameRules() throws Exception {
    // Envoy's descriptors serialized and rebuilt without PGV's extensions registered: the rules
    // arrive as unknown fields of the options, as from a FileDescriptorSet read at run time.
    Map<String, FileDescriptor> rebuilt = new HashMap<>();
    Descriptor clusterType = rebuild(Cluster.getDescriptor().getFile(), rebuilt)
        .findMessageTypeByName("Cluster");
    assertThat(clusterType).isNotSameAs(Cluster.getDescriptor());
    assertThat(clusterType.findFieldByName("connect_timeout").getOptions().getUnknownFields()
        .asMap()).isNotEmpty();
    Cluster bad = cluster().setConnectTimeout(Duration.newBuilder().setSeconds(-1))
        .setLoadAssignment(ClusterLoadAssignment.newBuilder().setClusterName("backend")
            .addEndpoints(LocalityLbEndpoints.newBuilder().addLbEndpoints(endpoint(99999))))
        .build();

    DynamicMessage dynamic = DynamicMessage.parseFrom(clusterType, bad.toByteString());

    assertThat(rules.check(dynamic)).map(Violation::toString)
        .isEqualTo(rules.check(bad).stream().map(Violation::toString).toList())
        .hasSize(2);
  }

  @Test
  void messageTypesWithoutRulesAnywhereInsideAreNotWalked() {
    // Struct and Value hold each other and have no rules: nothing to walk, recursion or not.
    assertThat(rules.plan(Struct.getDescriptor())).isNull();
    assertThat(rules.plan(Value.getDescriptor())).isNull();
    // a type that holds an Any may hold anything, so it is walked (Metadata's typed entries)
    assertThat(rules.plan(Filter.getDescriptor())).isNotNull();
    assertThat(rules.plan(Metadata.getDescriptor())).isNotNull();
    Cluster withMetadata = cluster().setMetadata(Metadata.newBuilder().putFilterMetadata("m",
        Struct.newBuilder().putFields("k", Value.newBuilder().setStringValue("").build())
            .build())).build();
    assertThat(rules.check(withMetadata)).isEmpty();
  }

  @Test
  void aTypesPlanIsCompiledOnceAndShared() {
    assertThat(rules.plan(Cluster.getDescriptor())).isSameAs(rules.plan(Cluster.getDescriptor()));
  }

  private static FileDescriptor rebuild(FileDescriptor f, Map<String, FileDescriptor> done)
      throws Exception {
    FileDescriptor known = done.get(f.getName());
    if (known != null) {
      return known;
    }
    List<FileDescriptor> deps = new ArrayList<>();
    for (FileDescriptor d : f.getDependencies()) {
      deps.add(rebuild(d, done));
    }
    FileDescriptorProto proto = FileDescriptorProto.parseFrom(f.toProto().toByteString());
    FileDescriptor built = FileDescriptor.buildFrom(proto, deps.toArray(new FileDescriptor[0]));
    done.put(f.getName(), built);
    return built;
  }
}
