package dev.meridian.internal.protocol;

import io.envoyproxy.envoy.config.core.v3.Node;

/** What a client announced in {@code node.client_features} that changes what it is sent. */
public record ClientFeatures(boolean resourceTtl, boolean resourceInSotw) {
  public static final String RESOURCE_TTL = "xds.config.supports-resource-ttl";
  /** What Envoy sends. */
  public static final String RESOURCE_IN_SOTW = "xds.config.resource-in-sotw";
  /** How the spec page spells it; accepted too. */
  public static final String RESOURCE_IN_SOTW_SPEC = "xds.config.supports-resource-in-sotw";

  public static ClientFeatures of(Node node) {
    return new ClientFeatures(node.getClientFeaturesList().contains(RESOURCE_TTL),
        node.getClientFeaturesList().contains(RESOURCE_IN_SOTW)
            || node.getClientFeaturesList().contains(RESOURCE_IN_SOTW_SPEC));
  }

  /** Spec "TTL": SotW carries TTLs only in Resource wrappers, gated by both features. */
  public boolean ttlInSotw() {
    return resourceTtl && resourceInSotw;
  }
}
