package dev.meridian.internal.config;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.internal.protocol.Snapshot;
import dev.meridian.internal.protocol.XdsResource;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.ConfigSource;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.config.route.v3.WeightedCluster;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The {@code grpc} validation profile: what a proxyless grpc-java client (1.85) would reject (NACK)
 * or silently ignore in a config, by the rules of its xDS resource parsers (gRFC A27 client, A28
 * routing, A36 server, A39 filters, A42 ring hash, A48 least request). Each finding names the
 * resource and the field. Only resource shapes gRPC reads are checked: API listeners for clients,
 * listeners with an address for xDS servers, and every route config, cluster and endpoint set.
 */
public final class GrpcProfile {
  /** ERROR: grpc-java NACKs the resource (and, for LDS/CDS, the whole response). WARNING: it is ignored or misbehaves. */
  public enum Severity { ERROR, WARNING }

  /** One problem: which group's resource, which field, and what grpc-java does about it. */
  public record Finding(Severity severity, String group, String type, String resource, String field,
      String message) {
    @Override
    public String toString() {
      return severity + " " + type + " " + resource + (group.equals(ServedConfig.DEFAULT_GROUP) ? ""
          : " (group " + group + ")") + ": " + field + ": " + message;
    }
  }

  static final String HCM_TYPE = "type.googleapis.com/envoy.extensions.filters.network"
      + ".http_connection_manager.v3.HttpConnectionManager";
  static final String ROUTER_TYPE = "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router";
  /** HTTP filters grpc-java implements (its FilterRegistry): router, fault, RBAC, GCP authn. */
  static final Set<String> SUPPORTED_FILTERS = Set.of(ROUTER_TYPE,
      "type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault",
      "type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC",
      "type.googleapis.com/envoy.extensions.filters.http.gcp_authn.v3.GcpAuthnFilterConfig");
  private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");

  private final List<Finding> findings = new ArrayList<>();
  private String group;
  private String type;
  private String resource;
  /** RouteConfigurations that server listeners (gRFC A36) fetch over RDS, in the current group. */
  private Set<String> serverRoutes = Set.of();

  private GrpcProfile() {}

  /** Names of RouteConfigurations referenced over RDS by listeners with an address (xDS servers). */
  private static Set<String> serverRouteConfigNames(Snapshot s) {
    Set<String> names = new HashSet<>();
    for (XdsResource r : s.get(ResourceType.LISTENER).resources().values()) {
      Listener l = (Listener) r.message();
      if (l.hasApiListener()) {
        continue;
      }
      List<FilterChain> chains = new ArrayList<>(l.getFilterChainsList());
      if (l.hasDefaultFilterChain()) {
        chains.add(l.getDefaultFilterChain());
      }
      for (FilterChain c : chains) {
        for (Filter f : c.getFiltersList()) {
          if (f.getTypedConfig().getTypeUrl().equals(HCM_TYPE)) {
            HttpConnectionManager hcm = unpack(f.getTypedConfig(), HttpConnectionManager.class);
            if (hcm != null && hcm.hasRds()) {
              names.add(hcm.getRds().getRouteConfigName());
            }
          }
        }
      }
    }
    return names;
  }

  /** Checks every group's resources; a resource shared unchanged by several groups is reported once. */
  public static List<Finding> check(ServedConfig config) {
    GrpcProfile p = new GrpcProfile();
    Set<String> seen = new HashSet<>();
    for (String g : config.groupNames()) {
      Snapshot s = config.snapshot(g);
      p.group = g;
      p.serverRoutes = serverRouteConfigNames(s);
      for (ResourceType t : List.of(ResourceType.LISTENER, ResourceType.ROUTE, ResourceType.CLUSTER,
          ResourceType.ENDPOINT)) {
        for (XdsResource r : s.get(t).resources().values()) {
          if (seen.add(t + "/" + r.name() + "/" + r.version() + "/" + p.serverRoutes.contains(r.name()))) {
            p.type = r.message().getDescriptorForType().getName();
            p.resource = r.name();
            p.checkResource(r);
          }
        }
      }
    }
    return List.copyOf(p.findings);
  }

  /** True if the config has API listeners, i.e. is meant for proxyless gRPC clients. */
  public static boolean servesGrpcClients(ServedConfig config) {
    for (String g : config.groupNames()) {
      for (XdsResource r : config.snapshot(g).get(ResourceType.LISTENER).resources().values()) {
        if (((Listener) r.message()).hasApiListener()) {
          return true;
        }
      }
    }
    return false;
  }

  private void checkResource(XdsResource r) {
    switch (r.type()) {
      case LISTENER -> listener((Listener) r.message());
      case ROUTE -> routeConfig("", (RouteConfiguration) r.message(), serverRoutes.contains(r.name()));
      case CLUSTER -> cluster((Cluster) r.message());
      case ENDPOINT -> endpoints((ClusterLoadAssignment) r.message());
      default -> { }
    }
  }

  private void error(String field, String message) {
    findings.add(new Finding(Severity.ERROR, group, type, resource, field, message));
  }

  private void warn(String field, String message) {
    findings.add(new Finding(Severity.WARNING, group, type, resource, field, message));
  }

  // --- LDS (gRFC A27 client listeners, A36 server listeners) ---

  private void listener(Listener l) {
    if (l.hasApiListener()) {
      Any any = l.getApiListener().getApiListener();
      if (!any.getTypeUrl().equals(HCM_TYPE)) {
        error("api_listener.api_listener", "grpc-java NACKs an API listener that is not an "
            + "HttpConnectionManager (got " + any.getTypeUrl() + ")");
        return;
      }
      hcm("api_listener.api_listener", unpack(any, HttpConnectionManager.class), false);
      return;
    }
    if (!l.hasAddress()) {
      return; // neither a client nor a server listener for gRPC
    }
    for (int i = 0; i < l.getFilterChainsCount(); i++) {
      serverChain("filter_chains[" + i + "]", l.getFilterChains(i));
    }
    if (l.hasDefaultFilterChain()) {
      serverChain("default_filter_chain", l.getDefaultFilterChain());
    }
  }

  private void serverChain(String path, FilterChain chain) {
    // gRFC A36: exactly one network filter, the HttpConnectionManager.
    if (chain.getFiltersCount() != 1 || !chain.getFilters(0).getTypedConfig().getTypeUrl().equals(HCM_TYPE)) {
      error(path + ".filters", "grpc-java NACKs a server filter chain whose filters are not exactly "
          + "one HttpConnectionManager");
      return;
    }
    Filter f = chain.getFilters(0);
    hcm(path + ".filters[0].typed_config", unpack(f.getTypedConfig(), HttpConnectionManager.class), true);
  }

  private void hcm(String path, HttpConnectionManager hcm, boolean server) {
    if (hcm == null) {
      error(path, "not a valid HttpConnectionManager");
      return;
    }
    switch (hcm.getRouteSpecifierCase()) {
      case RDS -> configSource(path + ".rds.config_source", hcm.getRds().getConfigSource());
      case ROUTE_CONFIG -> routeConfig(path + ".route_config.", hcm.getRouteConfig(), server);
      case SCOPED_ROUTES -> error(path + ".scoped_routes", "grpc-java does not support scoped routes "
          + "(NACK); use rds or route_config");
      default -> error(path, "grpc-java NACKs an HttpConnectionManager without rds or route_config");
    }
    // gRFC A39: the filter list must be non-empty and end with the (terminal) router, which may
    // appear nowhere else; unsupported filters are NACKed unless marked is_optional.
    List<HttpFilter> filters = hcm.getHttpFiltersList();
    if (filters.isEmpty()) {
      error(path + ".http_filters", "grpc-java NACKs an HttpConnectionManager without http_filters; "
          + "add envoy.filters.http.router last");
      return;
    }
    for (int i = 0; i < filters.size(); i++) {
      HttpFilter f = filters.get(i);
      String fp = path + ".http_filters[" + i + "]";
      String t = f.getTypedConfig().getTypeUrl();
      boolean last = i == filters.size() - 1;
      if (t.equals(ROUTER_TYPE) && !last) {
        error(fp, "the router must be the last HTTP filter (grpc-java NACKs a terminal filter "
            + "before the end)");
      } else if (last && !t.equals(ROUTER_TYPE)) {
        error(fp, "the last HTTP filter must be the router (envoy.filters.http.router); grpc-java NACKs "
            + "'" + f.getName() + "'");
      } else if (!SUPPORTED_FILTERS.contains(t)) {
        if (f.getIsOptional()) {
          warn(fp, "grpc-java does not implement " + (t.isEmpty() ? "'" + f.getName() + "'" : t)
              + "; it is optional, so grpc-java skips it");
        } else {
          error(fp, "grpc-java does not implement " + (t.isEmpty() ? "'" + f.getName() + "'" : t)
              + " and NACKs it (mark it is_optional to have it skipped)");
        }
      }
    }
  }

  private void configSource(String path, ConfigSource source) {
    if (!source.hasAds() && !source.hasSelf()) {
      error(path, "grpc-java only follows ads or self config sources (NACK)");
    }
  }

  // --- RDS (gRFC A28) ---

  private void routeConfig(String prefix, RouteConfiguration rc, boolean server) {
    for (int v = 0; v < rc.getVirtualHostsCount(); v++) {
      VirtualHost vh = rc.getVirtualHosts(v);
      for (int i = 0; i < vh.getRoutesCount(); i++) {
        route(prefix + "virtual_hosts[" + v + "].routes[" + i + "]", vh.getRoutes(i), server);
      }
    }
  }

  private void route(String path, Route r, boolean server) {
    if (server) {
      // gRFC A36: on the server, RPCs matching a route without non_forwarding_action fail.
      if (!r.hasNonForwardingAction()) {
        warn(path, "server-side routes need non_forwarding_action; grpc-java fails RPCs matching "
            + "this route with UNAVAILABLE");
      }
      return;
    }
    switch (r.getActionCase()) {
      case ROUTE -> routeAction(path + ".route", r.getRoute());
      case NON_FORWARDING_ACTION -> warn(path + ".non_forwarding_action",
          "non_forwarding_action is for xDS servers; a gRPC client fails RPCs matching it");
      case REDIRECT -> error(path + ".redirect", "grpc-java cannot redirect (NACK)");
      case DIRECT_RESPONSE -> error(path + ".direct_response", "grpc-java cannot send direct responses (NACK)");
      case FILTER_ACTION -> error(path + ".filter_action", "grpc-java does not support filter_action (NACK)");
      default -> error(path, "route without an action (NACK)");
    }
  }

  private void routeAction(String path, RouteAction a) {
    switch (a.getClusterSpecifierCase()) {
      case CLUSTER_HEADER -> warn(path + ".cluster_header",
          "grpc-java ignores routes that pick the cluster from a header");
      case WEIGHTED_CLUSTERS -> {
        WeightedCluster wc = a.getWeightedClusters();
        long sum = 0;
        for (WeightedCluster.ClusterWeight c : wc.getClustersList()) {
          sum += c.getWeight().getValue();
        }
        if (wc.getClustersCount() == 0 || sum == 0) {
          error(path + ".weighted_clusters", "grpc-java NACKs weighted clusters whose weights sum to 0");
        } else if (sum > 0xFFFFFFFFL) {
          error(path + ".weighted_clusters", "grpc-java NACKs weights summing above 2^32-1");
        }
      }
      case CLUSTER, CLUSTER_SPECIFIER_PLUGIN -> { }
      default -> error(path, "route action without a cluster (NACK)");
    }
    // Fields an Envoy route action honours that grpc-java silently ignores.
    if (!a.getPrefixRewrite().isEmpty() || a.hasRegexRewrite()) {
      warn(path + (a.hasRegexRewrite() ? ".regex_rewrite" : ".prefix_rewrite"),
          "grpc-java ignores path rewrites: the RPC keeps its method path");
    }
    if (a.hasHostRewriteLiteral() || a.hasAutoHostRewrite() || !a.getHostRewriteHeader().isEmpty()) {
      warn(path + ".host_rewrite_*", "grpc-java ignores host rewrites");
    }
    if (a.getRequestMirrorPoliciesCount() > 0) {
      warn(path + ".request_mirror_policies", "grpc-java does not mirror requests");
    }
    if (a.hasTimeout()) {
      warn(path + ".timeout", "grpc-java ignores timeout; use max_stream_duration.grpc_timeout_header_max "
          + "or max_stream_duration.max_stream_duration");
    }
  }

  // --- CDS (gRFC A27, A37 aggregate, A42 ring hash, A48 least request) ---

  private void cluster(Cluster c) {
    if (c.hasClusterType()) {
      if (!c.getClusterType().getName().equals("envoy.clusters.aggregate")) {
        error("cluster_type", "grpc-java only supports the aggregate custom cluster type (NACK), got "
            + c.getClusterType().getName());
      }
    } else {
      switch (c.getType()) {
        case EDS -> {
          if (!c.hasEdsClusterConfig()) {
            error("eds_cluster_config", "grpc-java NACKs an EDS cluster without eds_cluster_config");
          } else {
            configSource("eds_cluster_config.eds_config", c.getEdsClusterConfig().getEdsConfig());
          }
        }
        case LOGICAL_DNS -> { }
        default -> error("type", "grpc-java supports only EDS, LOGICAL_DNS and aggregate clusters "
            + "(NACK), got " + c.getType());
      }
    }
    if (!c.hasLoadBalancingPolicy()) {
      switch (c.getLbPolicy()) {
        case ROUND_ROBIN, RING_HASH, LEAST_REQUEST -> { }
        default -> error("lb_policy", "grpc-java NACKs lb_policy " + c.getLbPolicy()
            + " (supported: ROUND_ROBIN, RING_HASH, LEAST_REQUEST, or load_balancing_policy)");
      }
    }
    if (c.getTransportSocketMatchesCount() > 0) {
      error("transport_socket_matches", "grpc-java NACKs transport_socket_matches");
    }
    if (c.hasLoadAssignment() && c.getType() == Cluster.DiscoveryType.EDS) {
      warn("load_assignment", "grpc-java ignores an inline load_assignment on an EDS cluster; it "
          + "subscribes to the ClusterLoadAssignment over EDS");
    }
  }

  // --- EDS (gRFC A27) ---

  private void endpoints(ClusterLoadAssignment cla) {
    for (int i = 0; i < cla.getEndpointsCount(); i++) {
      LocalityLbEndpoints l = cla.getEndpoints(i);
      String path = "endpoints[" + i + "]";
      if (!l.hasLoadBalancingWeight() || l.getLoadBalancingWeight().getValue() == 0) {
        warn(path + ".load_balancing_weight", "grpc-java ignores a locality without a non-zero "
            + "load_balancing_weight, with all its endpoints");
      }
      for (int j = 0; j < l.getLbEndpointsCount(); j++) {
        LbEndpoint e = l.getLbEndpoints(j);
        String address = e.getEndpoint().getAddress().getSocketAddress().getAddress();
        if (!address.isEmpty() && !isIpLiteral(address)) {
          // Observed with grpc-java 1.85.1 (meridian-e2e): "Address is not an IP", NACK.
          error(path + ".lb_endpoints[" + j + "].endpoint.address.socket_address.address",
              "'" + address + "' is a host name; grpc-java NACKs EDS endpoints that are not IP "
              + "literals");
        }
      }
    }
  }

  static boolean isIpLiteral(String s) {
    return IPV4.matcher(s).matches() || (s.contains(":") && s.matches("[0-9A-Fa-f:.%]+"));
  }

  private static <T extends com.google.protobuf.Message> T unpack(Any any, Class<T> type) {
    try {
      return any.unpack(type);
    } catch (InvalidProtocolBufferException e) {
      return null;
    }
  }
}
