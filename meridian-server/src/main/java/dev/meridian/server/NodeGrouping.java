package dev.meridian.server;

import io.envoyproxy.envoy.config.core.v3.Node;

/**
 * Places each connecting node in a group: the group's resources are what it is served. The
 * application's own function of the node (and of the identity its verified client certificate
 * proves), as java-control-plane's {@code NodeGroup}.
 *
 * <p>Called on a stream's first request and again whenever published config concerns the stream,
 * on Meridian's stream threads: it must be fast, must not block and should be a pure function of
 * its arguments. A group that was never published serves nothing until it is.
 */
@FunctionalInterface
public interface NodeGrouping {
  /**
   * The group of {@code node}, or null to refuse the stream (it ends with PERMISSION_DENIED).
   *
   * @param identity the URI SAN (a SPIFFE ID: it holds {@code ://}) of the stream's verified
   *     client certificate, else its first DNS SAN when that is a host name (which never holds
   *     {@code :} or {@code /}), or null when the stream has none (plaintext, TLS without client
   *     certificates, or no SAN that is an identity); tell the two apart before matching
   */
  String groupOf(Node node, String identity);

  /** Every node in one group. */
  static NodeGrouping everyone(String group) {
    return (node, identity) -> group;
  }

  /** Each node in the group named by its {@code node.cluster}. */
  static NodeGrouping byCluster() {
    return (node, identity) -> node.getCluster();
  }

  /** Each node in the group named by its {@code node.id}. */
  static NodeGrouping byId() {
    return (node, identity) -> node.getId();
  }
}
