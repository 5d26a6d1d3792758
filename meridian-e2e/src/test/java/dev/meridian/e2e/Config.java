package dev.meridian.e2e;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Builds Meridian config files (JSON, which the YAML loader reads as flow YAML) holding the shapes
 * grpc-java accepts: API listeners with RDS, EDS clusters, weighted localities with IP endpoints,
 * and server-side listeners for {@code XdsServerBuilder}.
 */
final class Config {
  static final String LISTENER = "type.googleapis.com/envoy.config.listener.v3.Listener";
  static final String ROUTES = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration";
  static final String CLUSTER = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
  static final String CLA = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";
  static final String HCM = "type.googleapis.com/envoy.extensions.filters.network"
      + ".http_connection_manager.v3.HttpConnectionManager";
  static final String ROUTER = "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router";
  static final String ADS = "{\"ads\": {}, \"resource_api_version\": \"V3\"}";

  private final List<String> resources = new ArrayList<>();
  private final List<String> groups = new ArrayList<>();

  /** The usual chain for target {@code xds:///NAME}: listener NAME → routes NAME-routes → route. */
  static Config service(String name, String routeAction) {
    return new Config().add(clientListener(name, name + "-routes"))
        .add(routes(name + "-routes", routeAction));
  }

  Config add(String resource) {
    resources.add(resource);
    return this;
  }

  /** Adds an EDS cluster (round robin) and its endpoints in one locality of weight 1. */
  Config cluster(String name, int... ports) {
    return add(cluster(name, "ROUND_ROBIN")).add(endpoints(name, ports));
  }

  /** Adds a group: nodes whose id matches {@code nodeIdGlob} are served these resources instead. */
  Config group(String name, String nodeIdGlob, Config resources) {
    groups.add("{\"name\": \"" + name + "\", \"match\": {\"node_id\": \"" + nodeIdGlob
        + "\"}, \"resources\": [\n" + String.join(",\n", resources.resources) + "]}");
    return this;
  }

  String render() {
    StringBuilder b = new StringBuilder("{\"resources\": [\n")
        .append(String.join(",\n", resources)).append("\n]");
    if (!groups.isEmpty()) {
      b.append(",\n\"groups\": [\n").append(String.join(",\n", groups)).append("\n]");
    }
    return b.append("}\n").toString();
  }

  static String clientListener(String name, String routeConfigName) {
    return "{\"@type\": \"" + LISTENER + "\", \"name\": \"" + name + "\", \"api_listener\": "
        + "{\"api_listener\": {\"@type\": \"" + HCM + "\", \"stat_prefix\": \"" + name
        + "\", \"rds\": {\"route_config_name\": \""
        + routeConfigName + "\", \"config_source\": " + ADS + "}, \"http_filters\": " + ROUTER_FILTERS
        + "}}}";
  }

  static final String ROUTER_FILTERS =
      "[{\"name\": \"router\", \"typed_config\": {\"@type\": \"" + ROUTER + "\"}}]";

  static String routes(String name, String routeAction) {
    return "{\"@type\": \"" + ROUTES + "\", \"name\": \"" + name + "\", \"virtual_hosts\": [{"
        + "\"name\": \"all\", \"domains\": [\"*\"], \"routes\": [{\"match\": {\"prefix\": \"\"}, "
        + "\"route\": " + routeAction + "}]}]}";
  }

  static String toCluster(String cluster) {
    return "{\"cluster\": \"" + cluster + "\"}";
  }

  /** weighted_clusters: alternating name, weight. */
  static String weighted(Object... nameWeight) {
    List<String> entries = new ArrayList<>();
    for (int i = 0; i < nameWeight.length; i += 2) {
      entries.add("{\"name\": \"" + nameWeight[i] + "\", \"weight\": " + nameWeight[i + 1] + "}");
    }
    return "{\"weighted_clusters\": {\"clusters\": [" + String.join(", ", entries) + "]}}";
  }

  static String cluster(String name, String lbPolicy) {
    return "{\"@type\": \"" + CLUSTER + "\", \"name\": \"" + name + "\", \"type\": \"EDS\", "
        + "\"connect_timeout\": \"1s\", \"lb_policy\": \"" + lbPolicy + "\", "
        + "\"eds_cluster_config\": {\"eds_config\": " + ADS + "}}";
  }

  /** An EDS cluster (round robin) whose endpoints are the ClusterLoadAssignment {@code service}. */
  static String edsCluster(String name, String service) {
    return cluster(name, "ROUND_ROBIN").replace("\"eds_config\": " + ADS,
        "\"eds_config\": " + ADS + ", \"service_name\": \"" + service + "\"");
  }

  static String endpoints(String cluster, int... ports) {
    String lbEndpoints = Arrays.stream(ports)
        .mapToObj(p -> "{\"endpoint\": {\"address\": {\"socket_address\": {\"address\": \"127.0.0.1\", "
            + "\"port_value\": " + p + "}}}}")
        .collect(Collectors.joining(", "));
    // gRFC A27: grpc-java ignores localities without load_balancing_weight.
    return "{\"@type\": \"" + CLA + "\", \"cluster_name\": \"" + cluster + "\", \"endpoints\": [{"
        + "\"locality\": {\"region\": \"local\"}, \"load_balancing_weight\": 1, \"lb_endpoints\": ["
        + lbEndpoints + "]}]}";
  }

  /**
   * The inbound listener an {@code XdsServerBuilder} on {@code port} asks for (gRFC A36): its name
   * comes from the bootstrap's server_listener_resource_name_template; every route must carry
   * non_forwarding_action.
   */
  static String serverListener(String name, String ip, int port) {
    return "{\"@type\": \"" + LISTENER + "\", \"name\": \"" + name + "\", \"address\": "
        + "{\"socket_address\": {\"address\": \"" + ip + "\", \"port_value\": " + port + "}}, "
        + "\"filter_chains\": [{\"filters\": [{\"name\": \"hcm\", \"typed_config\": {\"@type\": \""
        + HCM + "\", \"stat_prefix\": \"inbound\", \"route_config\": {\"name\": \"inbound\", "
        + "\"virtual_hosts\": [{\"name\": \"inbound\", \"domains\": [\"*\"], \"routes\": [{\"match\": "
        + "{\"prefix\": \"\"}, \"non_forwarding_action\": {}}]}]}, \"http_filters\": " + ROUTER_FILTERS
        + "}}]}]}";
  }
}
