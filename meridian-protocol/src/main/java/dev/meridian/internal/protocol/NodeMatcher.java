package dev.meridian.internal.protocol;

import io.envoyproxy.envoy.config.core.v3.Node;
import java.util.regex.Pattern;

/**
 * Matches a node by id and cluster, and the stream's verified identity, with shell-style globs
 * ({@code *} any run, {@code ?} one character). A null pattern matches anything; all given
 * patterns must match.
 */
public final class NodeMatcher {
  private final String nodeIdGlob;
  private final String nodeClusterGlob;
  private final String identityGlob;
  private final Pattern nodeId;
  private final Pattern nodeCluster;
  private final Identity.Glob identity;

  public NodeMatcher(String nodeIdGlob, String nodeClusterGlob) {
    this(nodeIdGlob, nodeClusterGlob, null);
  }

  /** {@code identityGlob}: the verified identities allowed (issue 20); null: any, or none. */
  public NodeMatcher(String nodeIdGlob, String nodeClusterGlob, String identityGlob) {
    this.nodeIdGlob = nodeIdGlob;
    this.nodeClusterGlob = nodeClusterGlob;
    this.identityGlob = identityGlob;
    this.nodeId = nodeIdGlob == null ? null : glob(nodeIdGlob);
    this.nodeCluster = nodeClusterGlob == null ? null : glob(nodeClusterGlob);
    this.identity = identityGlob == null ? null : new Identity.Glob(identityGlob);
  }

  /** Whether what the node declares (id, cluster) matches; identity aside. */
  public boolean matches(Node node) {
    return (nodeId == null || nodeId.matcher(node.getId()).matches())
        && (nodeCluster == null || nodeCluster.matcher(node.getCluster()).matches());
  }

  /** Whether the node declares something this matcher selects by (its id or cluster). */
  public boolean selectsByNode() {
    return nodeId != null || nodeCluster != null;
  }

  /** Whether this matcher requires a verified identity. */
  public boolean requiresIdentity() {
    return identity != null;
  }

  /**
   * Whether {@code verified} (null: none) is allowed; any, when no identity is required. Typed: a
   * URI glob allows only URI identities, a DNS glob only host names ({@link Identity}).
   */
  public boolean allowsIdentity(String verified) {
    return identity == null || identity.matches(verified);
  }

  /** The node id glob, or null: any. */
  public String nodeIdGlob() {
    return nodeIdGlob;
  }

  /** The node cluster glob, or null: any. */
  public String nodeClusterGlob() {
    return nodeClusterGlob;
  }

  public String identityGlob() {
    return identityGlob;
  }

  static Pattern glob(String glob) {
    StringBuilder re = new StringBuilder();
    StringBuilder literal = new StringBuilder();
    for (char c : glob.toCharArray()) {
      if (c == '*' || c == '?') {
        if (literal.length() > 0) {
          re.append(Pattern.quote(literal.toString()));
          literal.setLength(0);
        }
        re.append(c == '*' ? ".*" : ".");
      } else {
        literal.append(c);
      }
    }
    if (literal.length() > 0) {
      re.append(Pattern.quote(literal.toString()));
    }
    return Pattern.compile(re.toString(), Pattern.DOTALL);
  }

  @Override
  public String toString() {
    return "{node_id: " + nodeIdGlob + ", node_cluster: " + nodeClusterGlob
        + (identityGlob == null ? "" : ", identity: " + identityGlob) + "}";
  }
}
