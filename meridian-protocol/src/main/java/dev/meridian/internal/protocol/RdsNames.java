package dev.meridian.internal.protocol;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** The RDS route configuration names a listener's HTTP connection managers depend on. */
public final class RdsNames {
  private RdsNames() {}

  public static Set<String> of(Listener l) {
    Set<String> names = new LinkedHashSet<>();
    for (HttpConnectionManager hcm : connectionManagers(l)) {
      if (hcm.hasRds()) {
        names.add(hcm.getRds().getRouteConfigName());
      }
    }
    return names;
  }

  /** Every HttpConnectionManager in the listener's filter chains and API listener. */
  public static List<HttpConnectionManager> connectionManagers(Listener l) {
    List<Any> configs = new ArrayList<>();
    List<FilterChain> chains = new ArrayList<>(l.getFilterChainsList());
    if (l.hasDefaultFilterChain()) {
      chains.add(l.getDefaultFilterChain());
    }
    for (FilterChain fc : chains) {
      for (Filter f : fc.getFiltersList()) {
        if (f.hasTypedConfig()) {
          configs.add(f.getTypedConfig());
        }
      }
    }
    if (l.hasApiListener()) {
      configs.add(l.getApiListener().getApiListener());
    }
    List<HttpConnectionManager> hcms = new ArrayList<>();
    for (Any a : configs) {
      if (a.is(HttpConnectionManager.class)) {
        try {
          hcms.add(a.unpack(HttpConnectionManager.class));
        } catch (InvalidProtocolBufferException e) {
          // An unreadable filter config has no route names to offer.
        }
      }
    }
    return hcms;
  }
}
