package example.registry;

import com.google.protobuf.Any;
import com.google.protobuf.Message;
import com.google.protobuf.UInt32Value;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.AggregatedConfigSource;
import io.envoyproxy.envoy.config.core.v3.ApiVersion;
import io.envoyproxy.envoy.config.core.v3.ConfigSource;
import io.envoyproxy.envoy.config.core.v3.Locality;
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
import io.envoyproxy.envoy.extensions.filters.http.router.v3.Router;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.Rds;
import java.util.List;
import java.util.SortedSet;

/**
 * What a service of the registry is in xDS, for a proxyless gRPC client whose target is
 * {@code xds:///<service>} (gRFC A27): an API Listener named after the service, its
 * RouteConfiguration ({@code <service>-routes}), an EDS Cluster and the ClusterLoadAssignment that
 * holds the instances. Everything is fetched over ADS. Pure functions: the same registry state
 * gives the same messages, so Meridian (which versions by content) sends nothing for a no-op.
 */
public final class XdsResources {
  private static final ConfigSource ADS = ConfigSource.newBuilder()
      .setAds(AggregatedConfigSource.getDefaultInstance())
      .setResourceApiVersion(ApiVersion.V3)
      .build();

  private XdsResources() {}

  /** The four resources of {@code service}. */
  public static List<Message> of(String service, SortedSet<ServiceRegistry.Instance> instances) {
    return List.of(listener(service), routes(service), cluster(service),
        endpoints(service, instances));
  }

  public static Listener listener(String service) {
    HttpConnectionManager hcm = HttpConnectionManager.newBuilder()
        // gRPC ignores it, but Envoy's rules (checked on every publication) require one
        .setStatPrefix(service)
        .setRds(Rds.newBuilder().setRouteConfigName(routesName(service)).setConfigSource(ADS))
        // gRFC A39: the router is the last (here, only) HTTP filter
        .addHttpFilters(HttpFilter.newBuilder().setName("envoy.filters.http.router")
            .setTypedConfig(Any.pack(Router.getDefaultInstance())))
        .build();
    return Listener.newBuilder()
        .setName(service)
        .setApiListener(ApiListener.newBuilder().setApiListener(Any.pack(hcm)))
        .build();
  }

  public static RouteConfiguration routes(String service) {
    return RouteConfiguration.newBuilder()
        .setName(routesName(service))
        .addVirtualHosts(VirtualHost.newBuilder()
            .setName(service)
            .addDomains("*")
            .addRoutes(Route.newBuilder()
                .setMatch(RouteMatch.newBuilder().setPrefix(""))
                .setRoute(RouteAction.newBuilder().setCluster(service))))
        .build();
  }

  public static Cluster cluster(String service) {
    return Cluster.newBuilder()
        .setName(service)
        .setType(Cluster.DiscoveryType.EDS)
        .setLbPolicy(Cluster.LbPolicy.ROUND_ROBIN)
        .setEdsClusterConfig(Cluster.EdsClusterConfig.newBuilder().setEdsConfig(ADS))
        .build();
  }

  /**
   * The instances of {@code service}, in one locality (grpc-java wants a
   * {@code load_balancing_weight} on each). No instances: an assignment with no endpoints, which
   * clients take as "nothing to connect to" rather than an error.
   */
  public static ClusterLoadAssignment endpoints(String service,
      SortedSet<ServiceRegistry.Instance> instances) {
    ClusterLoadAssignment.Builder cla = ClusterLoadAssignment.newBuilder().setClusterName(service);
    if (!instances.isEmpty()) {
      LocalityLbEndpoints.Builder locality = LocalityLbEndpoints.newBuilder()
          .setLocality(Locality.newBuilder().setRegion("local"))
          .setLoadBalancingWeight(UInt32Value.of(1));
      for (ServiceRegistry.Instance i : instances) { // sorted: same set, same bytes
        locality.addLbEndpoints(LbEndpoint.newBuilder().setEndpoint(Endpoint.newBuilder()
            .setAddress(Address.newBuilder().setSocketAddress(SocketAddress.newBuilder()
                .setAddress(i.ip()).setPortValue(i.port())))));
      }
      cla.addEndpoints(locality);
    }
    return cla.build();
  }

  public static String routesName(String service) {
    return service + "-routes";
  }
}
