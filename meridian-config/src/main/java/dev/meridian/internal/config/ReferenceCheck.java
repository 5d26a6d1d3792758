package dev.meridian.internal.config;

import dev.meridian.internal.protocol.RdsNames;
import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.internal.protocol.Snapshot;
import dev.meridian.internal.protocol.XdsResource;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.config.route.v3.WeightedCluster;
import java.util.ArrayList;
import java.util.List;

/**
 * The consistency check on load (spec "Resource warming"): references that a client would wait on
 * forever. An EDS cluster without endpoints never finishes warming; a listener whose RDS name no
 * route configuration provides never finishes warming; a route to an unknown cluster blackholes.
 */
public enum ReferenceCheck {
  /** No check. */
  OFF,
  /** Log each dangling reference; serve the config anyway (the default). */
  WARN,
  /** Reject the config: at start, serve exits; on reload, the last good config stays. */
  REJECT;

  /** Every dangling reference in every group, as "group G: what is missing". */
  public static List<String> problems(ServedConfig config) {
    List<String> problems = new ArrayList<>();
    for (String group : config.groupNames()) {
      check(group, config.snapshot(group), problems);
    }
    return problems;
  }

  private static void check(String group, Snapshot s, List<String> problems) {
    String where = "group '" + group + "': ";
    for (XdsResource r : s.get(ResourceType.CLUSTER).resources().values()) {
      Cluster c = (Cluster) r.message();
      if (c.getType() == Cluster.DiscoveryType.EDS) {
        String cla = c.getEdsClusterConfig().getServiceName().isEmpty() ? c.getName()
            : c.getEdsClusterConfig().getServiceName();
        if (s.get(ResourceType.ENDPOINT).get(cla) == null) {
          problems.add(where + "EDS cluster '" + c.getName()
              + "' has no endpoints: no ClusterLoadAssignment with cluster_name '" + cla + "'");
        }
      }
    }
    for (XdsResource r : s.get(ResourceType.LISTENER).resources().values()) {
      Listener l = (Listener) r.message();
      for (String rds : RdsNames.of(l)) {
        if (s.get(ResourceType.ROUTE).get(rds) == null) {
          problems.add(where + "listener '" + l.getName() + "' uses RDS route configuration '"
              + rds + "', which no RouteConfiguration provides");
        }
      }
    }
    for (XdsResource r : s.get(ResourceType.ROUTE).resources().values()) {
      RouteConfiguration rc = (RouteConfiguration) r.message();
      for (VirtualHost vh : rc.getVirtualHostsList()) {
        for (Route route : vh.getRoutesList()) {
          List<String> clusters = new ArrayList<>();
          if (!route.getRoute().getCluster().isEmpty()) {
            clusters.add(route.getRoute().getCluster());
          }
          for (WeightedCluster.ClusterWeight w : route.getRoute().getWeightedClusters().getClustersList()) {
            clusters.add(w.getName());
          }
          for (String c : clusters) {
            if (s.get(ResourceType.CLUSTER).get(c) == null) {
              problems.add(where + "route configuration '" + rc.getName() + "' virtual host '"
                  + vh.getName() + "' routes to cluster '" + c + "', which does not exist");
            }
          }
        }
      }
    }
  }
}
