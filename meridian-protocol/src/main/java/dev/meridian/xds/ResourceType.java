package dev.meridian.xds;

import com.google.protobuf.Message;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.TypedExtensionConfig;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.ScopedRouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.Secret;
import io.envoyproxy.envoy.service.runtime.v3.Runtime;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Function;

/**
 * The v3 resource types Meridian serves. The declaration order is the make-before-break order of the
 * spec ("Eventual consistency considerations"): clusters, endpoints, listeners, routes, then virtual
 * hosts; the remaining types have no ordering constraint and come last. LEDS endpoints
 * ({@link #LB_ENDPOINT}) are last too: a client asks for a locality's collection only once it holds
 * the ClusterLoadAssignment that names it, so nothing needs to hold them back (issue 26).
 */
public enum ResourceType {
  CLUSTER(Cluster.getDefaultInstance(), "clusters", "CDS", true, m -> ((Cluster) m).getName()),
  ENDPOINT(ClusterLoadAssignment.getDefaultInstance(), "endpoints", "EDS", false,
      m -> ((ClusterLoadAssignment) m).getClusterName()),
  LISTENER(Listener.getDefaultInstance(), "listeners", "LDS", true, m -> ((Listener) m).getName()),
  ROUTE(RouteConfiguration.getDefaultInstance(), "routes", "RDS", false,
      m -> ((RouteConfiguration) m).getName()),
  SCOPED_ROUTE(ScopedRouteConfiguration.getDefaultInstance(), "scoped-routes", "SRDS", false,
      m -> ((ScopedRouteConfiguration) m).getName()),
  VIRTUAL_HOST(VirtualHost.getDefaultInstance(), "virtual-hosts", "VHDS", false,
      m -> ((VirtualHost) m).getName()),
  SECRET(Secret.getDefaultInstance(), "secrets", "SDS", false, m -> ((Secret) m).getName()),
  RUNTIME(Runtime.getDefaultInstance(), "runtimes", "RTDS", false, m -> ((Runtime) m).getName()),
  EXTENSION_CONFIG(TypedExtensionConfig.getDefaultInstance(), "extension-configs", "ECDS", false,
      m -> ((TypedExtensionConfig) m).getName()),
  /**
   * Envoy's LEDS (issue 26): one endpoint of a locality whose ClusterLoadAssignment says
   * {@code leds_cluster_locality_config}; clients reach them through the locality's glob collection
   * ({@code xdstp://AUTH/envoy.config.endpoint.v3.LbEndpoint/PATH/*}). An {@code LbEndpoint} has
   * no name field: its name is the one its {@code Resource} wrapper carries ({@link #hasOwnName}).
   */
  LB_ENDPOINT(LbEndpoint.getDefaultInstance(), "lb-endpoints", "LEDS", false, m -> "");

  public static final String TYPE_URL_PREFIX = "type.googleapis.com/";

  private final Message defaultInstance;
  private final String typeUrl;
  private final String shortName;
  private final String abbreviation;
  private final boolean fullStateInSotw;
  private final Function<Message, String> nameOf;

  ResourceType(Message defaultInstance, String shortName, String abbreviation,
      boolean fullStateInSotw, Function<Message, String> nameOf) {
    this.defaultInstance = defaultInstance;
    this.typeUrl = TYPE_URL_PREFIX + defaultInstance.getDescriptorForType().getFullName();
    this.shortName = shortName;
    this.abbreviation = abbreviation;
    this.fullStateInSotw = fullStateInSotw;
    this.nameOf = nameOf;
  }

  public String typeUrl() {
    return typeUrl;
  }

  /** Short name used by the CLI and file names: {@code clusters}, {@code routes}, ... */
  public String shortName() {
    return shortName;
  }

  /** The discovery service's usual abbreviation (CDS, EDS, ...), for logs. */
  public String abbreviation() {
    return abbreviation;
  }

  public Message defaultInstance() {
    return defaultInstance;
  }

  public Class<? extends Message> messageClass() {
    return defaultInstance.getClass();
  }

  /**
   * Spec "Grouping Resources into Responses": in SotW, Listener and Cluster responses carry the
   * complete state of the world; every other type carries only what changed.
   */
  public boolean fullStateInSotw() {
    return fullStateInSotw;
  }

  /**
   * VHDS exists only as an Incremental service (spec "RPC Services and Methods"), and so does LEDS
   * ({@code envoy.service.endpoint.v3.LocalityEndpointDiscoveryService} has only
   * {@code DeltaLocalityEndpoints}; its resources are reached through glob collections, which
   * xDS TP1 defines for Incremental xDS only).
   */
  public boolean availableInSotw() {
    return this != VIRTUAL_HOST && this != LB_ENDPOINT;
  }

  /** The Incremental-only service of a type that has no SotW one, for errors; else null. */
  public String deltaOnlyService() {
    return switch (this) {
      case VIRTUAL_HOST -> "DeltaVirtualHosts";
      case LB_ENDPOINT -> "DeltaLocalityEndpoints";
      default -> null;
    };
  }

  /**
   * Whether the message carries its resource's name ({@code name}, a CLA's {@code cluster_name}).
   * An {@code LbEndpoint} does not: it is named by the {@code envoy.service.discovery.v3.Resource}
   * that wraps it, in the config as on the wire.
   */
  public boolean hasOwnName() {
    return this != LB_ENDPOINT;
  }

  /**
   * The resource's name as the protocol addresses it (a CLA is named by its cluster_name); empty
   * for a type without its own name ({@link #hasOwnName}).
   */
  public String nameOf(Message resource) {
    return nameOf.apply(resource);
  }

  /** The type whose resources are messages of {@code messageClass} ({@code Cluster.class}, ...). */
  public static Optional<ResourceType> fromMessageClass(Class<?> messageClass) {
    for (ResourceType t : values()) {
      if (t.messageClass().equals(messageClass)) {
        return Optional.of(t);
      }
    }
    return Optional.empty();
  }

  public static Optional<ResourceType> fromTypeUrl(String typeUrl) {
    for (ResourceType t : values()) {
      if (t.typeUrl.equals(typeUrl)) {
        return Optional.of(t);
      }
    }
    return Optional.empty();
  }

  /** Accepts a full type URL, a message's full name, a short name or an abbreviation. */
  public static Optional<ResourceType> parse(String text) {
    String s = text.trim();
    for (ResourceType t : values()) {
      if (t.typeUrl.equals(s)
          || t.defaultInstance.getDescriptorForType().getFullName().equals(s)
          || t.shortName.equalsIgnoreCase(s)
          || t.abbreviation.equalsIgnoreCase(s)
          || t.name().toLowerCase(Locale.ROOT).replace('_', '-').equals(s.toLowerCase(Locale.ROOT))) {
        return Optional.of(t);
      }
    }
    if (s.equalsIgnoreCase("runtime") || s.equalsIgnoreCase("extension_configs")) {
      return Optional.of(s.equalsIgnoreCase("runtime") ? RUNTIME : EXTENSION_CONFIG);
    }
    return Optional.empty();
  }

  public static List<ResourceType> all() {
    return Arrays.asList(values());
  }
}
