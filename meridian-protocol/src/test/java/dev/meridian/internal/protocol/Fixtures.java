package dev.meridian.internal.protocol;

import dev.meridian.xds.ResourceType;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.AggregatedConfigSource;
import io.envoyproxy.envoy.config.core.v3.ApiVersion;
import io.envoyproxy.envoy.config.core.v3.ConfigSource;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.Endpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.RouteMatch;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Small, real Envoy resources and request builders for core tests. */
final class Fixtures {
  private Fixtures() {}

  /**
   * The interning Sharing the scenario peers share unless given their own: as the streams of one
   * hub, so that one peer's stream meets answers another's left (each also has a plain twin).
   */
  static final Sharing HUB = Sharing.interning();

  static final ConfigSource ADS = ConfigSource.newBuilder()
      .setAds(AggregatedConfigSource.getDefaultInstance())
      .setResourceApiVersion(ApiVersion.V3).build();

  static XdsResource cluster(String name) {
    return XdsResource.of(ResourceType.CLUSTER, Cluster.newBuilder().setName(name)
        .setType(Cluster.DiscoveryType.EDS)
        .setEdsClusterConfig(Cluster.EdsClusterConfig.newBuilder().setEdsConfig(ADS)).build());
  }

  static XdsResource clusterWithTimeout(String name, int seconds) {
    return XdsResource.of(ResourceType.CLUSTER, ((Cluster) cluster(name).message()).toBuilder()
        .setConnectTimeout(com.google.protobuf.Duration.newBuilder().setSeconds(seconds)).build());
  }

  static XdsResource endpoints(String cluster, int port) {
    return XdsResource.of(ResourceType.ENDPOINT, ClusterLoadAssignment.newBuilder()
        .setClusterName(cluster)
        .addEndpoints(LocalityLbEndpoints.newBuilder().addLbEndpoints(LbEndpoint.newBuilder()
            .setEndpoint(Endpoint.newBuilder().setAddress(Address.newBuilder().setSocketAddress(
                SocketAddress.newBuilder().setAddress("127.0.0.1").setPortValue(port))))))
        .build());
  }

  static XdsResource listener(String name) {
    return XdsResource.of(ResourceType.LISTENER, Listener.newBuilder().setName(name).build());
  }

  static XdsResource route(String name, String cluster) {
    return XdsResource.of(ResourceType.ROUTE, RouteConfiguration.newBuilder().setName(name)
        .addVirtualHosts(VirtualHost.newBuilder().setName("vh").addDomains("*")
            .addRoutes(Route.newBuilder().setMatch(RouteMatch.newBuilder().setPrefix("/"))
                .setRoute(RouteAction.newBuilder().setCluster(cluster))))
        .build());
  }

  static ServedConfig config(XdsResource... resources) {
    return new ServedConfig(Snapshot.of(Arrays.asList(resources)), List.of());
  }

  static Node node(String id) {
    return Node.newBuilder().setId(id).setCluster("test").build();
  }

  static DiscoveryRequest.Builder request(ResourceType type, String... names) {
    return DiscoveryRequest.newBuilder().setTypeUrl(type.typeUrl())
        .addAllResourceNames(Arrays.asList(names));
  }

  /** The names of the resources in a response, in order. */
  static List<String> names(DiscoveryResponse response) {
    List<String> names = new ArrayList<>();
    for (Any a : response.getResourcesList()) {
      try {
        ResourceType t = ResourceType.fromTypeUrl(a.getTypeUrl()).orElseThrow();
        names.add(t.nameOf(t.defaultInstance().getParserForType().parseFrom(a.getValue())));
      } catch (InvalidProtocolBufferException e) {
        throw new AssertionError(e);
      }
    }
    return names;
  }
}
