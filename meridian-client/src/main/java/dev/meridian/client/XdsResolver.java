package dev.meridian.client;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.config.route.v3.WeightedCluster;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * Follows a listener the way a proxyless gRPC client does (gRFC A27, see the LDS/RDS walkthrough):
 * LDS -> HttpConnectionManager (RDS or inline route_config) -> route configuration -> the clusters
 * its routes name (CDS) -> their endpoints (EDS). Every change publishes a new immutable
 * {@link RoutingTable}, swapped atomically. Its state is touched only from watcher callbacks, which
 * the client runs serialized.
 */
public final class XdsResolver implements AutoCloseable {
  private final XdsClient client;
  private final String listenerName;
  private final AtomicReference<RoutingTable> table = new AtomicReference<>();
  private final List<Consumer<RoutingTable>> subscribers = new CopyOnWriteArrayList<>();

  // Serialized by the client's callback executor.
  private boolean listenerAbsent;
  private String rdsName;
  private Watch rdsWatch;
  private RouteConfiguration routeConfig;
  // Concurrent only so that close() may run on another thread; mutation stays serialized.
  private final Map<String, Watch> cdsWatches = new java.util.concurrent.ConcurrentHashMap<>();
  private final Map<String, Cluster> clusters = new HashMap<>();
  private final Map<String, Watch> edsWatches = new java.util.concurrent.ConcurrentHashMap<>();
  private final Map<String, ClusterLoadAssignment> endpoints = new HashMap<>();
  private final Set<String> absent = new HashSet<>();
  private volatile String lastError;
  private volatile XdsError lastXdsError;
  private volatile boolean closed;
  private Watch ldsWatch;

  public XdsResolver(XdsClient client, String listenerName) {
    this.client = client;
    this.listenerName = listenerName;
    table.set(snapshot());
  }

  /** Starts watching; {@code onUpdate} gets every new table (serialized). */
  public XdsResolver start(Consumer<RoutingTable> onUpdate) {
    if (onUpdate != null) {
      subscribers.add(onUpdate);
    }
    ldsWatch = client.watch(ResourceType.LISTENER, listenerName, new Base() {
      @Override
      void changed(ResourceUpdate u) {
        listenerAbsent = false;
        onListener((Listener) u.message());
      }

      @Override
      void missing(String name) {
        listenerAbsent = true;
        setRds(null);
        routeConfig = null;
        syncClusters();
      }
    });
    return this;
  }

  /** The current table: never null, possibly incomplete. */
  public RoutingTable current() {
    return table.get();
  }

  /** The last error a watcher reported (for diagnostics), or null. */
  public String lastError() {
    return lastError;
  }

  /** The last error a watcher was told (its kind says whether retrying can help), or null. */
  public XdsError lastXdsError() {
    return lastXdsError;
  }

  /** Callbacks of a closed resolver do nothing (one may be in flight while it closes). */
  private abstract class Base implements ResourceWatcher {
    @Override
    public final void onChanged(ResourceUpdate u) {
      if (!closed) {
        changed(u);
      }
    }

    @Override
    public final void onDoesNotExist(ResourceType type, String name) {
      if (!closed) {
        missing(name);
      }
    }

    abstract void changed(ResourceUpdate u);

    abstract void missing(String name);

    @Override
    public void onError(XdsError error) {
      lastError = error.toString();
      lastXdsError = error;
    }
  }

  private void onListener(Listener l) {
    Optional<HttpConnectionManager> hcm = hcm(l);
    if (hcm.isEmpty()) {
      lastError = "listener " + l.getName() + " has no HttpConnectionManager";
      setRds(null);
      routeConfig = null;
    } else if (hcm.get().hasRouteConfig()) {
      setRds(null);
      routeConfig = hcm.get().getRouteConfig();
    } else {
      setRds(hcm.get().getRds().getRouteConfigName());
    }
    syncClusters();
  }

  /** gRPC clients use the api_listener; a server-style listener's first HCM also works here. */
  static Optional<HttpConnectionManager> hcm(Listener l) {
    try {
      if (l.hasApiListener() && l.getApiListener().getApiListener().is(HttpConnectionManager.class)) {
        return Optional.of(l.getApiListener().getApiListener().unpack(HttpConnectionManager.class));
      }
      for (FilterChain fc : l.getFilterChainsList()) {
        for (Filter f : fc.getFiltersList()) {
          if (f.hasTypedConfig() && f.getTypedConfig().is(HttpConnectionManager.class)) {
            return Optional.of(f.getTypedConfig().unpack(HttpConnectionManager.class));
          }
        }
      }
    } catch (InvalidProtocolBufferException e) {
      // validated by the client already; treat as absent
    }
    return Optional.empty();
  }

  private void setRds(String name) {
    if (name != null && name.equals(rdsName)) {
      return;
    }
    if (rdsWatch != null) {
      rdsWatch.cancel();
      rdsWatch = null;
    }
    absent.remove("route:" + rdsName);
    rdsName = name;
    routeConfig = null;
    if (name == null) {
      return;
    }
    rdsWatch = client.watch(ResourceType.ROUTE, name, new Base() {
      @Override
      void changed(ResourceUpdate u) {
        if (name.equals(rdsName)) {
          absent.remove("route:" + name);
          routeConfig = (RouteConfiguration) u.message();
          syncClusters();
        }
      }

      @Override
      void missing(String n) {
        if (name.equals(rdsName)) {
          absent.add("route:" + name);
          routeConfig = null;
          syncClusters();
        }
      }
    });
  }

  /** Watches exactly the clusters the route configuration names, and their endpoints. */
  private void syncClusters() {
    Set<String> wanted = new LinkedHashSet<>();
    if (routeConfig != null) {
      for (VirtualHost vh : routeConfig.getVirtualHostsList()) {
        for (Route r : vh.getRoutesList()) {
          if (r.hasRoute()) {
            if (!r.getRoute().getCluster().isEmpty()) {
              wanted.add(r.getRoute().getCluster());
            }
            for (WeightedCluster.ClusterWeight w : r.getRoute().getWeightedClusters().getClustersList()) {
              wanted.add(w.getName());
            }
          }
        }
      }
    }
    for (String gone : new HashSet<>(cdsWatches.keySet())) {
      if (!wanted.contains(gone)) {
        cdsWatches.remove(gone).cancel();
        clusters.remove(gone);
        absent.remove("cluster:" + gone);
      }
    }
    for (String name : wanted) {
      if (!cdsWatches.containsKey(name)) {
        cdsWatches.put(name, client.watch(ResourceType.CLUSTER, name, new Base() {
          @Override
          void changed(ResourceUpdate u) {
            if (cdsWatches.containsKey(name)) {
              absent.remove("cluster:" + name);
              clusters.put(name, (Cluster) u.message());
              syncEndpoints();
            }
          }

          @Override
          void missing(String n) {
            if (cdsWatches.containsKey(name)) {
              absent.add("cluster:" + name);
              clusters.remove(name);
              syncEndpoints();
            }
          }
        }));
      }
    }
    syncEndpoints();
  }

  private void syncEndpoints() {
    Set<String> wanted = new HashSet<>();
    for (Cluster c : clusters.values()) {
      if (c.getType() == Cluster.DiscoveryType.EDS && !c.hasLoadAssignment()) {
        wanted.add(RoutingTable.edsServiceName(c));
      }
    }
    for (String gone : new HashSet<>(edsWatches.keySet())) {
      if (!wanted.contains(gone)) {
        edsWatches.remove(gone).cancel();
        endpoints.remove(gone);
        absent.remove("endpoints:" + gone);
      }
    }
    for (String service : wanted) {
      if (!edsWatches.containsKey(service)) {
        edsWatches.put(service, client.watch(ResourceType.ENDPOINT, service, new Base() {
          @Override
          void changed(ResourceUpdate u) {
            if (edsWatches.containsKey(service)) {
              absent.remove("endpoints:" + service);
              endpoints.put(service, (ClusterLoadAssignment) u.message());
              publish();
            }
          }

          @Override
          void missing(String n) {
            if (edsWatches.containsKey(service)) {
              absent.add("endpoints:" + service);
              endpoints.remove(service);
              publish();
            }
          }
        }));
      }
    }
    publish();
  }

  private RoutingTable snapshot() {
    return new RoutingTable(listenerName, listenerAbsent, rdsName, routeConfig, clusters, endpoints,
        absent);
  }

  private void publish() {
    RoutingTable t = snapshot();
    table.set(t);
    for (Consumer<RoutingTable> s : subscribers) {
      s.accept(t);
    }
  }

  @Override
  public void close() {
    closed = true;
    subscribers.clear();
    if (ldsWatch != null) {
      ldsWatch.cancel();
    }
    if (rdsWatch != null) {
      rdsWatch.cancel();
    }
    cdsWatches.values().forEach(Watch::cancel);
    edsWatches.values().forEach(Watch::cancel);
  }
}
