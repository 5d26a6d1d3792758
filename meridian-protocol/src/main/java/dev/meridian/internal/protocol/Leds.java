package dev.meridian.internal.protocol;

import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import java.util.ArrayList;
import java.util.List;

/**
 * The naming rules of Envoy's LEDS (Locality Endpoint Discovery Service; issue 26), which the
 * config loader, the embedding API and the client library share. A ClusterLoadAssignment's locality
 * that says {@code leds_cluster_locality_config} gets its endpoints from the glob collection named
 * by {@code leds_collection_name} (endpoint_components.proto, LedsClusterLocalityConfig: a name
 * ending in {@code /*} is a glob collection, "supported only in the xDS incremental protocol
 * variants", and "Envoy currently supports only glob collections"); each endpoint is an
 * {@code envoy.config.endpoint.v3.LbEndpoint} resource named by a member of that collection (xDS
 * TP1 "Glob"):
 * <pre>
 *   leds_collection_name: xdstp://AUTH/envoy.config.endpoint.v3.LbEndpoint/PATH/*
 *   an endpoint's name:   xdstp://AUTH/envoy.config.endpoint.v3.LbEndpoint/PATH/NAME
 * </pre>
 */
public final class Leds {
  /** The type segment of LEDS names: the type URL without {@code type.googleapis.com/}. */
  public static final String TYPE = ResourceType.LB_ENDPOINT.defaultInstance()
      .getDescriptorForType().getFullName();

  private Leds() {}

  /**
   * What is wrong with {@code name} as an LbEndpoint's name, or null: it must be an xdstp name of
   * the LbEndpoint type, one resource (not a glob), in canonical form; otherwise no LEDS
   * collection could hold it.
   */
  public static String problemAsEndpointName(String name) {
    if (!XdstpName.isXdstp(name)) {
      return "an LbEndpoint (LEDS) is named by a member of its locality's glob collection, an"
          + " xdstp name such as xdstp://AUTHORITY/" + TYPE + "/PATH/NAME; got '" + name + "'";
    }
    return XdstpName.problemAsResourceName(name, ResourceType.LB_ENDPOINT.typeUrl());
  }

  /**
   * What is wrong with {@code name} as a {@code leds_collection_name}, or null: an xdstp glob
   * collection ({@code .../*}) of the LbEndpoint type, in canonical form (clients subscribe with
   * the name as written, and members are matched to it canonically).
   */
  public static String problemAsCollectionName(String name) {
    String expected = "a glob collection of LbEndpoints, xdstp://AUTHORITY/" + TYPE + "/PATH/*";
    if (name.isEmpty()) {
      return "leds_collection_name is empty; it names " + expected;
    }
    if (!XdstpName.isXdstp(name)) {
      return "leds_collection_name '" + name + "' is not an xdstp name; it names " + expected;
    }
    XdstpName n;
    try {
      n = XdstpName.parse(name);
    } catch (IllegalArgumentException e) {
      return "leds_collection_name: " + e.getMessage();
    }
    if (!n.type().equals(TYPE)) {
      return "leds_collection_name " + name + " has the type segment '" + n.type()
          + "'; it names " + expected;
    }
    if (!n.isGlob()) {
      return "leds_collection_name " + name + " is not a glob collection (it must end in /*);"
          + " it names " + expected;
    }
    String canonical = n.canonical();
    if (!canonical.equals(name)) {
      return "leds_collection_name " + name + " is not in canonical form; write it as "
          + canonical + " (context parameters sorted, percent-encodings normalized)";
    }
    return null;
  }

  /**
   * The problems of {@code cla}'s LEDS localities, each as {@code {locality index, message}}:
   * an invalid {@code leds_collection_name}, or a locality that lists {@code lb_endpoints} too
   * (endpoint_components.proto: {@code lb_endpoints} "is ignored if leds_cluster_locality_config
   * is set", so the list would silently do nothing).
   */
  public static List<Problem> problems(ClusterLoadAssignment cla) {
    List<Problem> out = new ArrayList<>();
    for (int i = 0; i < cla.getEndpointsCount(); i++) {
      LocalityLbEndpoints l = cla.getEndpoints(i);
      if (!l.hasLedsClusterLocalityConfig()) {
        continue;
      }
      String p = problemAsCollectionName(l.getLedsClusterLocalityConfig().getLedsCollectionName());
      if (p != null) {
        out.add(new Problem(i, p));
      }
      if (l.getLbEndpointsCount() > 0) {
        out.add(new Problem(i, "a locality with leds_cluster_locality_config gets its endpoints"
            + " from LEDS; it may not list lb_endpoints too"));
      }
    }
    return out;
  }

  /** A problem of the locality {@code endpoints[locality]}. */
  public record Problem(int locality, String message) {}
}
