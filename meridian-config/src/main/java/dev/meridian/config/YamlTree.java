package dev.meridian.config;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import java.math.BigDecimal;
import java.math.BigInteger;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * YAML (and JSON, which YAML reads) to a JSON tree, keeping node positions so errors can name the
 * line. Only plain data is accepted: no custom tags, no object construction.
 */
final class YamlTree {
  private YamlTree() {}

  static Node compose(String text) {
    LoaderOptions options = new LoaderOptions();
    options.setAllowDuplicateKeys(false);
    options.setMaxAliasesForCollections(50);
    options.setCodePointLimit(256 * 1024 * 1024);
    return new Yaml(options).compose(new java.io.StringReader(text));
  }

  static int line(Node node) {
    return node.getStartMark().getLine() + 1;
  }

  static JsonElement toJson(Node node) throws TreeException {
    if (node instanceof MappingNode m) {
      JsonObject o = new JsonObject();
      for (NodeTuple t : m.getValue()) {
        if (!(t.getKeyNode() instanceof ScalarNode k)) {
          throw new TreeException(t.getKeyNode(), "mapping keys must be plain strings");
        }
        if (o.has(k.getValue())) {
          throw new TreeException(k, "duplicate key '" + k.getValue() + "'");
        }
        o.add(k.getValue(), toJson(t.getValueNode()));
      }
      return o;
    }
    if (node instanceof SequenceNode s) {
      JsonArray a = new JsonArray();
      for (Node n : s.getValue()) {
        a.add(toJson(n));
      }
      return a;
    }
    ScalarNode s = (ScalarNode) node;
    Tag tag = s.getTag();
    String v = s.getValue();
    try {
      if (Tag.NULL.equals(tag)) {
        return JsonNull.INSTANCE;
      } else if (Tag.BOOL.equals(tag)) {
        return new JsonPrimitive(v.equalsIgnoreCase("true") || v.equalsIgnoreCase("yes")
            || v.equalsIgnoreCase("on") || v.equalsIgnoreCase("y"));
      } else if (Tag.INT.equals(tag)) {
        String digits = v.replace("_", "");
        return new JsonPrimitive(digits.startsWith("0x") ? new BigInteger(digits.substring(2), 16)
            : new BigInteger(digits));
      } else if (Tag.FLOAT.equals(tag)) {
        if (v.matches("[-+]?\\.(inf|Inf|INF)|\\.(nan|NaN|NAN)")) {
          return new JsonPrimitive(v.contains("nan") || v.contains("NaN") || v.contains("NAN")
              ? "NaN" : (v.startsWith("-") ? "-Infinity" : "Infinity"));
        }
        return new JsonPrimitive(new BigDecimal(v.replace("_", "")));
      } else if (Tag.STR.equals(tag) || Tag.TIMESTAMP.equals(tag)) {
        return new JsonPrimitive(v);
      }
    } catch (NumberFormatException e) {
      return new JsonPrimitive(v);
    }
    throw new TreeException(node, "unsupported YAML tag " + tag);
  }

  /** A problem located at a YAML node. */
  static final class TreeException extends Exception {
    final int line;

    TreeException(Node node, String message) {
      this(line(node), message);
    }

    TreeException(int line, String message) {
      super(message);
      this.line = line;
    }
  }
}
