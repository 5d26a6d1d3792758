package dev.meridian.client;

import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.HealthStatus;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.envoyproxy.envoy.config.route.v3.HeaderMatcher;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.RouteMatch;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.config.route.v3.WeightedCluster;
import io.envoyproxy.envoy.type.matcher.v3.StringMatcher;
import io.envoyproxy.envoy.type.v3.FractionalPercent;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.DoubleSupplier;
import java.util.regex.Pattern;

/**
 * An immutable view of what a listener routes to: the route configuration and the clusters and
 * endpoints it references, as far as they are known. {@link XdsResolver} publishes a new one on
 * every change (the model is gRPC's xDS name resolver and config selector, gRFC A27/A28).
 *
 * @param routeConfig null until known (RDS or inline)
 * @param clusters known clusters by name; {@code absent} names the ones that do not exist
 * @param endpoints known assignments by EDS service name
 */
public record RoutingTable(String listenerName, boolean listenerAbsent, String routeConfigName,
    RouteConfiguration routeConfig, Map<String, Cluster> clusters,
    Map<String, ClusterLoadAssignment> endpoints, Set<String> absent) {

  public RoutingTable {
    clusters = Map.copyOf(clusters);
    endpoints = Map.copyOf(endpoints);
    absent = Set.copyOf(absent);
  }

  /** The result of routing one call; {@code problem} is non-null when it could not be routed. */
  public record Resolution(VirtualHost virtualHost, Route route, List<WeightedChoice> clusters,
      String cluster, Cluster clusterResource, ClusterLoadAssignment assignment,
      SocketAddress endpoint, String problem) {
    static Resolution failed(String problem, VirtualHost vh, Route r, List<WeightedChoice> c,
        String cluster, Cluster cr, ClusterLoadAssignment cla) {
      return new Resolution(vh, r, c, cluster, cr, cla, null, problem);
    }

    public boolean ok() {
      return problem == null;
    }
  }

  /** One cluster of a route's action and its weight. */
  public record WeightedChoice(String name, int weight) {}

  /**
   * Routes a call: virtual host for the authority (most specific domain), first matching route,
   * a cluster by weight, then an endpoint (lowest usable priority, locality and endpoint by weight).
   */
  public Resolution resolve(String authority, String path, Map<String, String> headers,
      DoubleSupplier random) {
    if (listenerAbsent) {
      return Resolution.failed("listener " + listenerName + " does not exist", null, null, null,
          null, null, null);
    }
    if (routeConfig == null) {
      return Resolution.failed(routeConfigName == null ? "listener " + listenerName + " not yet received"
          : "route configuration " + routeConfigName + (absent.contains("route:" + routeConfigName)
              ? " does not exist" : " not yet received"), null, null, null, null, null, null);
    }
    Optional<VirtualHost> vh = virtualHost(routeConfig.getVirtualHostsList(), authority);
    if (vh.isEmpty()) {
      return Resolution.failed("no virtual host matches authority " + authority, null, null, null,
          null, null, null);
    }
    Route route = null;
    for (Route r : vh.get().getRoutesList()) {
      if (matches(r.getMatch(), path, headers, random)) {
        route = r;
        break;
      }
    }
    if (route == null) {
      return Resolution.failed("no route of virtual host " + vh.get().getName() + " matches " + path,
          vh.get(), null, null, null, null, null);
    }
    if (!route.hasRoute()) {
      return Resolution.failed("the matching route does not forward (" + route.getActionCase() + ")",
          vh.get(), route, null, null, null, null);
    }
    List<WeightedChoice> choices = choices(route.getRoute(), headers);
    if (choices.isEmpty()) {
      return Resolution.failed("the route names no cluster", vh.get(), route, choices, null, null,
          null);
    }
    String cluster = pick(choices, random);
    Cluster c = clusters.get(cluster);
    if (c == null) {
      return Resolution.failed("cluster " + cluster + (absent.contains("cluster:" + cluster)
          ? " does not exist" : " not yet received"), vh.get(), route, choices, cluster, null, null);
    }
    String service = edsServiceName(c);
    ClusterLoadAssignment cla = c.hasLoadAssignment() ? c.getLoadAssignment() : endpoints.get(service);
    if (cla == null) {
      return Resolution.failed("endpoints of " + service + (absent.contains("endpoints:" + service)
          ? " do not exist" : " not yet received"), vh.get(), route, choices, cluster, c, null);
    }
    SocketAddress endpoint = pickEndpoint(cla, random);
    if (endpoint == null) {
      return Resolution.failed("cluster " + cluster + " has no usable endpoint", vh.get(), route,
          choices, cluster, c, cla);
    }
    return new Resolution(vh.get(), route, choices, cluster, c, cla, endpoint, null);
  }

  /** The EDS service name of a cluster: eds_cluster_config.service_name, else its own name. */
  public static String edsServiceName(Cluster c) {
    String s = c.getEdsClusterConfig().getServiceName();
    return s.isEmpty() ? c.getName() : s;
  }

  /**
   * Envoy's (and gRPC's) domain matching: an exact domain wins, then the longest suffix wildcard
   * ({@code *.example.com}), then the longest prefix wildcard ({@code example.*}), then {@code *}.
   */
  static Optional<VirtualHost> virtualHost(List<VirtualHost> hosts, String authority) {
    String host = authority.toLowerCase(Locale.ROOT);
    VirtualHost best = null;
    int bestRank = Integer.MAX_VALUE;
    int bestLen = -1;
    for (VirtualHost vh : hosts) {
      for (String d : vh.getDomainsList()) {
        String domain = d.toLowerCase(Locale.ROOT);
        int rank;
        if (domain.equals(host)) {
          rank = 0;
        } else if (domain.equals("*")) {
          rank = 3;
        } else if (domain.startsWith("*") && host.endsWith(domain.substring(1))) {
          rank = 1;
        } else if (domain.endsWith("*") && host.startsWith(domain.substring(0, domain.length() - 1))) {
          rank = 2;
        } else {
          continue;
        }
        if (rank < bestRank || (rank == bestRank && domain.length() > bestLen)) {
          best = vh;
          bestRank = rank;
          bestLen = domain.length();
        }
      }
    }
    return Optional.ofNullable(best);
  }

  static boolean matches(RouteMatch m, String path, Map<String, String> headers,
      DoubleSupplier random) {
    boolean caseSensitive = !m.hasCaseSensitive() || m.getCaseSensitive().getValue();
    boolean pathOk = switch (m.getPathSpecifierCase()) {
      case PREFIX -> caseSensitive ? path.startsWith(m.getPrefix())
          : path.toLowerCase(Locale.ROOT).startsWith(m.getPrefix().toLowerCase(Locale.ROOT));
      case PATH -> caseSensitive ? path.equals(m.getPath()) : path.equalsIgnoreCase(m.getPath());
      case SAFE_REGEX -> Pattern.compile(m.getSafeRegex().getRegex()).matcher(path).matches();
      default -> false; // connect matchers and path templates do not apply to gRPC calls
    };
    if (!pathOk) {
      return false;
    }
    for (HeaderMatcher h : m.getHeadersList()) {
      if (!matches(h, headers)) {
        return false;
      }
    }
    if (m.hasRuntimeFraction()) {
      FractionalPercent f = m.getRuntimeFraction().getDefaultValue();
      long denominator = switch (f.getDenominator()) {
        case TEN_THOUSAND -> 10_000;
        case MILLION -> 1_000_000;
        default -> 100;
      };
      return random.getAsDouble() * denominator < f.getNumerator();
    }
    return true;
  }

  static boolean matches(HeaderMatcher h, Map<String, String> headers) {
    String value = headers.get(h.getName().toLowerCase(Locale.ROOT));
    if (value == null) {
      value = headers.get(h.getName());
    }
    boolean result;
    if (h.getHeaderMatchSpecifierCase() == HeaderMatcher.HeaderMatchSpecifierCase.PRESENT_MATCH) {
      result = (value != null) == h.getPresentMatch();
    } else if (value == null) {
      if (!h.getTreatMissingHeaderAsEmpty()) {
        return false; // a missing header matches nothing, inverted or not (Envoy's rule)
      }
      result = matchValue(h, "");
    } else {
      result = matchValue(h, value);
    }
    return result != h.getInvertMatch();
  }

  private static boolean matchValue(HeaderMatcher h, String v) {
    return switch (h.getHeaderMatchSpecifierCase()) {
      case EXACT_MATCH -> v.equals(h.getExactMatch());
      case SAFE_REGEX_MATCH -> Pattern.compile(h.getSafeRegexMatch().getRegex()).matcher(v).matches();
      case RANGE_MATCH -> {
        try {
          long n = Long.parseLong(v);
          yield n >= h.getRangeMatch().getStart() && n < h.getRangeMatch().getEnd();
        } catch (NumberFormatException e) {
          yield false;
        }
      }
      case PREFIX_MATCH -> v.startsWith(h.getPrefixMatch());
      case SUFFIX_MATCH -> v.endsWith(h.getSuffixMatch());
      case CONTAINS_MATCH -> v.contains(h.getContainsMatch());
      case STRING_MATCH -> matches(h.getStringMatch(), v);
      default -> true;
    };
  }

  static boolean matches(StringMatcher s, String v) {
    String value = s.getIgnoreCase() ? v.toLowerCase(Locale.ROOT) : v;
    return switch (s.getMatchPatternCase()) {
      case EXACT -> value.equals(lower(s, s.getExact()));
      case PREFIX -> value.startsWith(lower(s, s.getPrefix()));
      case SUFFIX -> value.endsWith(lower(s, s.getSuffix()));
      case CONTAINS -> value.contains(lower(s, s.getContains()));
      case SAFE_REGEX -> Pattern.compile(s.getSafeRegex().getRegex()).matcher(v).matches();
      default -> false;
    };
  }

  private static String lower(StringMatcher s, String p) {
    return s.getIgnoreCase() ? p.toLowerCase(Locale.ROOT) : p;
  }

  static List<WeightedChoice> choices(RouteAction a, Map<String, String> headers) {
    List<WeightedChoice> out = new ArrayList<>();
    switch (a.getClusterSpecifierCase()) {
      case CLUSTER -> out.add(new WeightedChoice(a.getCluster(), 1));
      case CLUSTER_HEADER -> {
        String v = headers.get(a.getClusterHeader().toLowerCase(Locale.ROOT));
        if (v != null) {
          out.add(new WeightedChoice(v, 1));
        }
      }
      case WEIGHTED_CLUSTERS -> {
        for (WeightedCluster.ClusterWeight w : a.getWeightedClusters().getClustersList()) {
          if (w.getWeight().getValue() > 0) {
            out.add(new WeightedChoice(w.getName(), w.getWeight().getValue()));
          }
        }
      }
      default -> { }
    }
    return out;
  }

  static String pick(List<WeightedChoice> choices, DoubleSupplier random) {
    long total = 0;
    for (WeightedChoice c : choices) {
      total += c.weight();
    }
    double x = random.getAsDouble() * total;
    for (WeightedChoice c : choices) {
      x -= c.weight();
      if (x < 0) {
        return c.name();
      }
    }
    return choices.get(choices.size() - 1).name();
  }

  private static boolean usable(LbEndpoint e) {
    HealthStatus h = e.getHealthStatus();
    return e.hasEndpoint() && (h == HealthStatus.UNKNOWN || h == HealthStatus.HEALTHY);
  }

  /** gRFC A27/A42: the lowest priority with a usable endpoint, locality then endpoint by weight. */
  static SocketAddress pickEndpoint(ClusterLoadAssignment cla, DoubleSupplier random) {
    int bestPriority = Integer.MAX_VALUE;
    for (LocalityLbEndpoints l : cla.getEndpointsList()) {
      if (l.getPriority() < bestPriority && l.getLbEndpointsList().stream().anyMatch(RoutingTable::usable)) {
        bestPriority = l.getPriority();
      }
    }
    List<LocalityLbEndpoints> localities = new ArrayList<>();
    List<WeightedChoice> weights = new ArrayList<>();
    for (LocalityLbEndpoints l : cla.getEndpointsList()) {
      if (l.getPriority() == bestPriority && l.getLbEndpointsList().stream().anyMatch(RoutingTable::usable)) {
        int w = l.hasLoadBalancingWeight() ? l.getLoadBalancingWeight().getValue() : 1;
        if (w > 0) {
          weights.add(new WeightedChoice(String.valueOf(localities.size()), w));
          localities.add(l);
        }
      }
    }
    if (localities.isEmpty()) {
      return null;
    }
    LocalityLbEndpoints l = localities.get(Integer.parseInt(pick(weights, random)));
    List<WeightedChoice> eps = new ArrayList<>();
    for (int i = 0; i < l.getLbEndpointsCount(); i++) {
      LbEndpoint e = l.getLbEndpoints(i);
      if (usable(e)) {
        int w = e.hasLoadBalancingWeight() ? e.getLoadBalancingWeight().getValue() : 1;
        eps.add(new WeightedChoice(String.valueOf(i), Math.max(1, w)));
      }
    }
    return l.getLbEndpoints(Integer.parseInt(pick(eps, random))).getEndpoint().getAddress()
        .getSocketAddress();
  }
}
