package dev.meridian.client;

import com.google.protobuf.Any;
import com.google.protobuf.Message;
import com.google.protobuf.UInt32Value;
import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.AggregatedConfigSource;
import io.envoyproxy.envoy.config.core.v3.ConfigSource;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.Endpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.envoyproxy.envoy.config.listener.v3.ApiListener;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.RouteMatch;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.config.route.v3.WeightedCluster;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.Rds;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;

/** Small valid (and deliberately invalid) Envoy resources for tests. */
final class TestResources {
  private TestResources() {}

  static final ConfigSource ADS = ConfigSource.newBuilder()
      .setAds(AggregatedConfigSource.getDefaultInstance()).build();

  static Cluster edsCluster(String name) {
    return Cluster.newBuilder().setName(name).setType(Cluster.DiscoveryType.EDS)
        .setEdsClusterConfig(Cluster.EdsClusterConfig.newBuilder().setEdsConfig(ADS)).build();
  }

  /** Invalid: an EDS cluster must say where its endpoints come from. */
  static Cluster edsClusterWithoutEdsConfig(String name) {
    return Cluster.newBuilder().setName(name).setType(Cluster.DiscoveryType.EDS).build();
  }

  static Listener apiListener(String name, String routeConfigName) {
    HttpConnectionManager hcm = HttpConnectionManager.newBuilder()
        .setRds(Rds.newBuilder().setRouteConfigName(routeConfigName).setConfigSource(ADS)).build();
    return Listener.newBuilder().setName(name)
        .setApiListener(ApiListener.newBuilder().setApiListener(Any.pack(hcm))).build();
  }

  /** Invalid: an HCM without rds or route_config. */
  static Listener apiListenerWithoutRoutes(String name) {
    return Listener.newBuilder().setName(name).setApiListener(ApiListener.newBuilder()
        .setApiListener(Any.pack(HttpConnectionManager.getDefaultInstance()))).build();
  }

  static RouteConfiguration routes(String name, String domain, String prefix, String cluster) {
    return RouteConfiguration.newBuilder().setName(name).addVirtualHosts(VirtualHost.newBuilder()
        .setName(domain + "-vh").addDomains(domain).addRoutes(Route.newBuilder()
            .setMatch(RouteMatch.newBuilder().setPrefix(prefix))
            .setRoute(RouteAction.newBuilder().setCluster(cluster)))).build();
  }

  static WeightedCluster weighted(Object... nameWeight) {
    WeightedCluster.Builder b = WeightedCluster.newBuilder();
    for (int i = 0; i < nameWeight.length; i += 2) {
      b.addClusters(WeightedCluster.ClusterWeight.newBuilder().setName((String) nameWeight[i])
          .setWeight(UInt32Value.of((Integer) nameWeight[i + 1])));
    }
    return b.build();
  }

  static ClusterLoadAssignment endpoints(String cluster, int... ports) {
    LocalityLbEndpoints.Builder l = LocalityLbEndpoints.newBuilder();
    for (int p : ports) {
      l.addLbEndpoints(LbEndpoint.newBuilder().setEndpoint(Endpoint.newBuilder().setAddress(
          Address.newBuilder().setSocketAddress(SocketAddress.newBuilder()
              .setAddress("127.0.0.1").setPortValue(p)))));
    }
    return ClusterLoadAssignment.newBuilder().setClusterName(cluster).addEndpoints(l).build();
  }

  static DiscoveryResponse sotw(ResourceType type, String version, String nonce,
      Message... resources) {
    DiscoveryResponse.Builder b = DiscoveryResponse.newBuilder().setTypeUrl(type.typeUrl())
        .setVersionInfo(version).setNonce(nonce);
    for (Message m : resources) {
      b.addResources(Any.pack(m));
    }
    return b.build();
  }

  static Resource wrapped(String name, Message m, String version, long ttlSeconds) {
    Resource.Builder b = Resource.newBuilder().setName(name).setVersion(version);
    if (m != null) {
      b.setResource(Any.pack(m));
    }
    if (ttlSeconds > 0) {
      b.setTtl(com.google.protobuf.Duration.newBuilder().setSeconds(ttlSeconds));
    }
    return b.build();
  }
}
