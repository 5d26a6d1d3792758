package dev.meridian.client;

import dev.meridian.xds.ResourceType;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a stream reads from the client: what it wants and what it holds, per server and type. The
 * streams see the client only through this and {@link ResponseHandler} (the model is grpc-java's
 * ResourceStore). Called on the client's context only.
 */
interface ResourceStore {
  /** The types the scope carries with a subscription on this server, in make-before-break order. */
  List<ResourceType> subscribedTypes(Bootstrap.ServerInfo server, StreamScope scope);

  /** What the client wants of a type from this server. */
  Interest interest(Bootstrap.ServerInfo server, ResourceType type);

  /**
   * The last version of the type accepted from this server or another of its list (SotW
   * version_info, carried across a fallback, gRFC A71); "" before any.
   */
  String acceptedVersion(Bootstrap.ServerInfo server, ResourceType type);

  /**
   * The resources held from this server or another of its list, name to server version (Delta
   * reconnects and fallbacks).
   */
  Map<String, String> heldVersions(Bootstrap.ServerInfo server, ResourceType type);

  /**
   * A type's subscription on one server: the wildcard, and the names watched one by one (in the
   * order they were first watched).
   */
  record Interest(boolean wildcard, Set<String> names) {
    static final Interest NONE = new Interest(false, Set.of());

    /** Subscribed at all. */
    boolean any() {
      return wildcard || !names.isEmpty();
    }
  }
}
