package dev.meridian.client;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.config.route.v3.WeightedCluster;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * Per-type validation of a decoded resource: what a client cannot use is rejected (NACKed) instead
 * of applied (spec "ACK/NACK and resource instance versioning"; grpc-java's XdsResourceType#doParse).
 * Returns the list of problems, empty when the resource is usable.
 */
final class ResourceValidator {
  static final String HCM_TYPE_URL = "type.googleapis.com/"
      + HttpConnectionManager.getDescriptor().getFullName();

  private ResourceValidator() {}

  static List<String> validate(ResourceType type, Message m) {
    List<String> errors = new ArrayList<>();
    if (type.hasOwnName() && type.nameOf(m).isEmpty()) {
      errors.add(type == ResourceType.ENDPOINT ? "cluster_name is empty" : "name is empty");
    }
    switch (type) {
      case LISTENER -> listener((Listener) m, errors);
      case ROUTE -> routeConfig((RouteConfiguration) m, errors);
      case VIRTUAL_HOST -> virtualHost((VirtualHost) m, "", errors);
      case CLUSTER -> cluster((Cluster) m, errors);
      case ENDPOINT -> endpoints((ClusterLoadAssignment) m, errors);
      default -> { }
    }
    return errors;
  }

  private static void listener(Listener l, List<String> errors) {
    if (l.hasApiListener()) {
      Any api = l.getApiListener().getApiListener();
      if (api.getTypeUrl().equals(HCM_TYPE_URL)) {
        hcm(api, "api_listener", false, errors);
      }
    }
    for (int i = 0; i < l.getFilterChainsCount(); i++) {
      filterChain(l.getFilterChains(i), "filter_chains[" + i + "]", errors);
    }
    if (l.hasDefaultFilterChain()) {
      filterChain(l.getDefaultFilterChain(), "default_filter_chain", errors);
    }
  }

  private static void filterChain(FilterChain fc, String where, List<String> errors) {
    for (int j = 0; j < fc.getFiltersCount(); j++) {
      Filter f = fc.getFilters(j);
      if (f.hasTypedConfig() && f.getTypedConfig().getTypeUrl().equals(HCM_TYPE_URL)) {
        hcm(f.getTypedConfig(), where + ".filters[" + j + "]", true, errors);
      }
    }
  }

  /** An HttpConnectionManager must say where its routes come from. */
  private static void hcm(Any any, String where, boolean scopedAllowed, List<String> errors) {
    HttpConnectionManager hcm;
    try {
      hcm = any.unpack(HttpConnectionManager.class);
    } catch (InvalidProtocolBufferException e) {
      errors.add(where + ": cannot parse HttpConnectionManager: " + e.getMessage());
      return;
    }
    if (hcm.hasRds()) {
      if (hcm.getRds().getRouteConfigName().isEmpty()) {
        errors.add(where + ": rds.route_config_name is empty");
      }
    } else if (hcm.hasRouteConfig()) {
      routeConfig(hcm.getRouteConfig(), errors);
    } else if (!(scopedAllowed && hcm.hasScopedRoutes())) {
      errors.add(where + ": HttpConnectionManager has neither rds nor route_config");
    }
  }

  private static void routeConfig(RouteConfiguration rc, List<String> errors) {
    for (int i = 0; i < rc.getVirtualHostsCount(); i++) {
      virtualHost(rc.getVirtualHosts(i), "virtual_hosts[" + i + "]", errors);
    }
  }

  private static void virtualHost(VirtualHost vh, String where, List<String> errors) {
    String at = where.isEmpty() ? "" : where + " ";
    if (vh.getDomainsCount() == 0) {
      errors.add(at + "virtual host " + vh.getName() + " has no domains");
    }
    for (int j = 0; j < vh.getRoutesCount(); j++) {
      route(vh.getRoutes(j), at + "virtual host " + vh.getName() + " routes[" + j + "]", errors);
    }
  }

  private static void route(Route r, String where, List<String> errors) {
    if (r.getMatch().hasSafeRegex()) {
      try {
        Pattern.compile(r.getMatch().getSafeRegex().getRegex());
      } catch (PatternSyntaxException e) {
        errors.add(where + ": invalid safe_regex: " + e.getDescription());
      }
    }
    if (r.hasRoute()) {
      var action = r.getRoute();
      if (action.hasWeightedClusters()) {
        WeightedCluster wc = action.getWeightedClusters();
        long sum = 0;
        for (var c : wc.getClustersList()) {
          if (c.getName().isEmpty() && c.getClusterHeader().isEmpty()) {
            errors.add(where + ": weighted cluster without a name");
          }
          sum += c.getWeight().getValue();
        }
        if (wc.getClustersCount() == 0 || sum == 0) {
          errors.add(where + ": weighted_clusters has no cluster with a positive weight");
        }
      } else if (action.getCluster().isEmpty() && action.getClusterHeader().isEmpty()
          && !action.hasInlineClusterSpecifierPlugin()
          && action.getClusterSpecifierPlugin().isEmpty()) {
        errors.add(where + ": route action names no cluster");
      }
    }
  }

  private static void cluster(Cluster c, List<String> errors) {
    if (c.hasType() && c.getType() == Cluster.DiscoveryType.EDS) {
      if (!c.hasEdsClusterConfig() || !c.getEdsClusterConfig().hasEdsConfig()) {
        errors.add("EDS cluster has no eds_cluster_config.eds_config");
      }
    }
  }

  private static void endpoints(ClusterLoadAssignment cla, List<String> errors) {
    TreeSet<Integer> priorities = new TreeSet<>();
    for (int i = 0; i < cla.getEndpointsCount(); i++) {
      LocalityLbEndpoints lle = cla.getEndpoints(i);
      priorities.add(lle.getPriority());
      for (int j = 0; j < lle.getLbEndpointsCount(); j++) {
        LbEndpoint e = lle.getLbEndpoints(j);
        String where = "endpoints[" + i + "].lb_endpoints[" + j + "]";
        if (e.hasEndpoint()) {
          var sa = e.getEndpoint().getAddress().getSocketAddress();
          if (e.getEndpoint().getAddress().hasSocketAddress()
              && (sa.getAddress().isEmpty() || sa.getPortValue() == 0 && sa.getNamedPort().isEmpty())) {
            errors.add(where + ": socket_address needs an address and a port");
          }
        }
      }
    }
    // gRFC A27 (EDS): priorities must be contiguous from 0.
    if (!priorities.isEmpty() && priorities.last() != priorities.size() - 1) {
      errors.add("priorities " + priorities + " are not contiguous from 0");
    }
  }
}
