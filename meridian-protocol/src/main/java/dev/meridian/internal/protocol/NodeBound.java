package dev.meridian.internal.protocol;

import io.envoyproxy.envoy.config.core.v3.Node;

/**
 * How long a node's id and cluster may be. Real ones are far shorter: Envoy's
 * {@code --service-node}, gRPC's bootstrap {@code node.id}, Istio's
 * {@code sidecar~IP~pod.namespace~namespace.svc.cluster.local} (Kubernetes bounds a pod name at
 * 253 bytes and a namespace at 63, so under 1 KiB). 4 KiB leaves four times that, and refuses a
 * node id of megabytes before the server keeps it, logs it or shows it.
 */
public final class NodeBound {
  /** The most UTF-8 bytes of {@code node.id}, and of {@code node.cluster}. */
  public static final int MAX_BYTES = 4096;

  private NodeBound() {}

  /** Why {@code node} is refused, or null: the message names the field and sizes, not the value. */
  public static String refusal(Node node) {
    int id = node.getIdBytes().size();
    if (id > MAX_BYTES) {
      return "node.id is " + id + " bytes; this server takes at most " + MAX_BYTES;
    }
    int cluster = node.getClusterBytes().size();
    if (cluster > MAX_BYTES) {
      return "node.cluster is " + cluster + " bytes; this server takes at most " + MAX_BYTES;
    }
    return null;
  }
}
