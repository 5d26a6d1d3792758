package dev.meridian.cli;

import com.google.protobuf.Message;
import dev.meridian.client.ResourceUpdate;
import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.core.v3.TypedExtensionConfig;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.ScopedRouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.Secret;
import io.envoyproxy.envoy.service.runtime.v3.Runtime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;

/**
 * {@code meridian get}'s table (issue 24): NAME, VERSION and a one-line SUMMARY per resource, and
 * with {@code -o wide} also TTL and DETAIL. Summaries read only shapes and counts: a secret's row
 * says what kind of secret it is and which fields it has, never their contents.
 */
final class ResourceTable {
  private static final int MAX_LISTED = 5;

  private ResourceTable() {}

  /** The table, header first, columns separated by at least three spaces (as kubectl). */
  static String render(Collection<ResourceUpdate> updates, boolean wide) {
    List<String[]> rows = new ArrayList<>();
    rows.add(wide ? new String[] {"NAME", "VERSION", "TTL", "SUMMARY", "DETAIL"}
        : new String[] {"NAME", "VERSION", "SUMMARY"});
    for (ResourceUpdate u : updates) {
      String version = u.serverVersion() == null || u.serverVersion().isEmpty()
          ? "-" : u.serverVersion();
      String summary = summary(u.type(), u.message());
      rows.add(wide
          ? new String[] {u.name(), version, u.ttl() == null ? "-" : duration(u.ttl()),
              summary, orDash(detail(u.type(), u.message()))}
          : new String[] {u.name(), version, summary});
    }
    return format(rows);
  }

  /** {@code -o name}: one {@code clusters/NAME} line per resource (as kubectl's). */
  static String names(Collection<ResourceUpdate> updates) {
    StringBuilder b = new StringBuilder();
    for (ResourceUpdate u : updates) {
      if (b.length() > 0) {
        b.append('\n');
      }
      b.append(u.type().shortName()).append('/').append(u.name());
    }
    return b.toString();
  }

  static String format(List<String[]> rows) {
    int columns = rows.get(0).length;
    int[] width = new int[columns];
    for (String[] r : rows) {
      for (int i = 0; i < columns; i++) {
        width[i] = Math.max(width[i], r[i].length());
      }
    }
    StringBuilder b = new StringBuilder();
    for (String[] r : rows) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < columns; i++) {
        line.append(r[i]);
        if (i < columns - 1) {
          line.append(" ".repeat(width[i] - r[i].length() + 3));
        }
      }
      if (b.length() > 0) {
        b.append('\n');
      }
      b.append(line.toString().stripTrailing());
    }
    return b.toString();
  }

  /** One line: what kind of resource this is, with its main counts. */
  static String summary(ResourceType type, Message m) {
    return switch (type) {
      case CLUSTER -> cluster((Cluster) m);
      case ENDPOINT -> endpoints((ClusterLoadAssignment) m);
      case LISTENER -> listener((Listener) m);
      case ROUTE -> {
        RouteConfiguration r = (RouteConfiguration) m;
        int routes = r.getVirtualHostsList().stream().mapToInt(VirtualHost::getRoutesCount).sum();
        yield count(r.getVirtualHostsCount(), "virtual host") + ", " + count(routes, "route")
            + (r.hasVhds() ? ", VHDS" : "");
      }
      case SCOPED_ROUTE -> {
        ScopedRouteConfiguration s = (ScopedRouteConfiguration) m;
        yield "route configuration " + (s.hasRouteConfiguration()
            ? s.getRouteConfiguration().getName() + " (inline)" : s.getRouteConfigurationName())
            + ", " + count(s.getKey().getFragmentsCount(), "key fragment");
      }
      case VIRTUAL_HOST -> {
        VirtualHost v = (VirtualHost) m;
        yield count(v.getDomainsCount(), "domain") + ", " + count(v.getRoutesCount(), "route");
      }
      case SECRET -> secret((Secret) m);
      case RUNTIME -> count(((Runtime) m).getLayer().getFieldsCount(), "key");
      case EXTENSION_CONFIG -> {
        TypedExtensionConfig e = (TypedExtensionConfig) m;
        yield e.hasTypedConfig() ? messageName(e.getTypedConfig().getTypeUrl()) : "no typed_config";
      }
      case LB_ENDPOINT -> lbEndpoint((LbEndpoint) m);
    };
  }

  /** {@code -o wide}'s DETAIL: names and addresses the summary only counts. */
  static String detail(ResourceType type, Message m) {
    return switch (type) {
      case CLUSTER -> {
        Cluster c = (Cluster) m;
        List<String> parts = new ArrayList<>();
        if (c.hasConnectTimeout()) {
          parts.add("connect timeout " + duration(c.getConnectTimeout()));
        }
        if (c.hasTransportSocket()) {
          parts.add("transport socket " + c.getTransportSocket().getName());
        }
        if (c.hasLoadAssignment()) {
          parts.add(addresses(c.getLoadAssignment()));
        }
        yield String.join(", ", parts);
      }
      case ENDPOINT -> addresses((ClusterLoadAssignment) m);
      case LISTENER -> {
        Listener l = (Listener) m;
        if (l.hasApiListener()) {
          yield messageName(l.getApiListener().getApiListener().getTypeUrl());
        }
        List<String> filters = new ArrayList<>();
        for (FilterChain fc : l.getFilterChainsList()) {
          for (Filter f : fc.getFiltersList()) {
            if (!filters.contains(f.getName())) {
              filters.add(f.getName());
            }
          }
        }
        yield listed(filters);
      }
      case ROUTE -> {
        List<String> hosts = new ArrayList<>();
        for (VirtualHost v : ((RouteConfiguration) m).getVirtualHostsList()) {
          hosts.add(v.getName() + " " + v.getDomainsList());
        }
        yield listed(hosts);
      }
      case VIRTUAL_HOST -> listed(((VirtualHost) m).getDomainsList());
      case SECRET -> {
        // Which fields are set (names only), never their values.
        Secret s = (Secret) m;
        Message kind = switch (s.getTypeCase()) {
          case TLS_CERTIFICATE -> s.getTlsCertificate();
          case VALIDATION_CONTEXT -> s.getValidationContext();
          case SESSION_TICKET_KEYS -> s.getSessionTicketKeys();
          case GENERIC_SECRET -> s.getGenericSecret();
          default -> null;
        };
        yield kind == null ? "" : listed(kind.getAllFields().keySet().stream()
            .map(f -> f.getName()).toList());
      }
      case RUNTIME -> listed(new ArrayList<>(((Runtime) m).getLayer().getFieldsMap().keySet()));
      case SCOPED_ROUTE, EXTENSION_CONFIG, LB_ENDPOINT -> "";
    };
  }

  private static String cluster(Cluster c) {
    String discovery = switch (c.getClusterDiscoveryTypeCase()) {
      case CLUSTER_TYPE -> c.getClusterType().getName();
      default -> c.getType().name();
    };
    StringBuilder b = new StringBuilder(discovery);
    if (c.getClusterDiscoveryTypeCase() != Cluster.ClusterDiscoveryTypeCase.CLUSTER_TYPE
        && c.getType() == Cluster.DiscoveryType.EDS) {
      String service = c.getEdsClusterConfig().getServiceName();
      b.append(" (service ").append(service.isEmpty() ? c.getName() : service).append(')');
    }
    if (c.hasLoadBalancingPolicy() && c.getLoadBalancingPolicy().getPoliciesCount() > 0) {
      TypedExtensionConfig p = c.getLoadBalancingPolicy().getPolicies(0).getTypedExtensionConfig();
      b.append(", ").append(p.hasTypedConfig() ? messageName(p.getTypedConfig().getTypeUrl())
          : p.getName());
    } else {
      b.append(", ").append(c.getLbPolicy().name());
    }
    if (c.hasLoadAssignment()) {
      b.append(", ").append(endpoints(c.getLoadAssignment()));
    }
    return b.toString();
  }

  private static String endpoints(ClusterLoadAssignment a) {
    int n = 0;
    String first = null;
    for (LocalityLbEndpoints l : a.getEndpointsList()) {
      for (LbEndpoint e : l.getLbEndpointsList()) {
        n++;
        if (first == null && e.hasEndpoint()) {
          first = address(e.getEndpoint().getAddress());
        }
      }
    }
    int localities = a.getEndpointsCount();
    long leds = a.getEndpointsList().stream()
        .filter(LocalityLbEndpoints::hasLedsClusterLocalityConfig).count();
    return count(n, "endpoint") + " in " + (localities == 1 ? "1 locality" : localities + " localities")
        + (first == null ? "" : " (" + first + (n > 1 ? ", ..." : "") + ")")
        + (leds == 0 ? "" : ", " + leds + " by LEDS");
  }

  /** A LEDS endpoint: its address and, when set, its health status. */
  private static String lbEndpoint(LbEndpoint e) {
    String where = e.hasEndpoint() ? address(e.getEndpoint().getAddress()) : "no endpoint";
    return e.getHealthStatusValue() == 0 ? where
        : where + ", " + e.getHealthStatus().name();
  }

  private static String addresses(ClusterLoadAssignment a) {
    List<String> all = new ArrayList<>();
    for (LocalityLbEndpoints l : a.getEndpointsList()) {
      for (LbEndpoint e : l.getLbEndpointsList()) {
        if (e.hasEndpoint()) {
          all.add(address(e.getEndpoint().getAddress()));
        }
      }
    }
    return listed(all);
  }

  private static String listener(Listener l) {
    int chains = l.getFilterChainsCount() + (l.hasDefaultFilterChain() ? 1 : 0);
    if (l.hasApiListener()) {
      return "API listener";
    }
    return (l.hasAddress() ? address(l.getAddress()) : "no address") + ", "
        + count(chains, "filter chain");
  }

  private static String secret(Secret s) {
    return s.getTypeCase() == Secret.TypeCase.TYPE_NOT_SET ? "empty"
        : s.getTypeCase().name().toLowerCase(Locale.ROOT);
  }

  static String address(Address a) {
    if (a.hasSocketAddress()) {
      SocketAddress s = a.getSocketAddress();
      String host = s.getAddress().contains(":") ? "[" + s.getAddress() + "]" : s.getAddress();
      return host + ":" + (s.hasNamedPort() ? s.getNamedPort() : String.valueOf(s.getPortValue()));
    } else if (a.hasPipe()) {
      return "pipe " + a.getPipe().getPath();
    } else if (a.hasEnvoyInternalAddress()) {
      return "internal " + a.getEnvoyInternalAddress().getServerListenerName();
    }
    return "no address";
  }

  private static String duration(com.google.protobuf.Duration d) {
    return Durations.format(Duration.ofSeconds(d.getSeconds(), d.getNanos()));
  }

  private static String messageName(String typeUrl) {
    return typeUrl.substring(typeUrl.lastIndexOf('/') + 1);
  }

  private static String count(int n, String what) {
    return n + " " + what + (n == 1 ? "" : "s");
  }

  private static String listed(List<String> items) {
    if (items.size() <= MAX_LISTED) {
      return String.join(", ", items);
    }
    return String.join(", ", items.subList(0, MAX_LISTED)) + ", +" + (items.size() - MAX_LISTED)
        + " more";
  }

  private static String orDash(String s) {
    return s == null || s.isEmpty() ? "-" : s;
  }
}
