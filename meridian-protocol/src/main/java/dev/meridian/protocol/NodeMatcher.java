package dev.meridian.protocol;

import io.envoyproxy.envoy.config.core.v3.Node;
import java.util.regex.Pattern;

/**
 * Matches a node by id and cluster with shell-style globs ({@code *} any run, {@code ?} one
 * character). A null pattern matches anything; all given patterns must match.
 */
public final class NodeMatcher {
  private final String nodeIdGlob;
  private final String nodeClusterGlob;
  private final Pattern nodeId;
  private final Pattern nodeCluster;

  public NodeMatcher(String nodeIdGlob, String nodeClusterGlob) {
    this.nodeIdGlob = nodeIdGlob;
    this.nodeClusterGlob = nodeClusterGlob;
    this.nodeId = nodeIdGlob == null ? null : glob(nodeIdGlob);
    this.nodeCluster = nodeClusterGlob == null ? null : glob(nodeClusterGlob);
  }

  public boolean matches(Node node) {
    return (nodeId == null || nodeId.matcher(node.getId()).matches())
        && (nodeCluster == null || nodeCluster.matcher(node.getCluster()).matches());
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
    return "{node_id: " + nodeIdGlob + ", node_cluster: " + nodeClusterGlob + "}";
  }
}
