package dev.meridian.config;

import com.google.gson.JsonElement;
import java.util.ArrayList;
import java.util.List;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * One value of a config file as the loader walks it, with the line it starts on. Two sources: a
 * YAML node tree (any file), or {@link JsonConfig}'s reader for strict JSON files, which hands
 * over each resource as its raw text so an unchanged resource is recognized without parsing it.
 */
abstract class ConfigNode {
  enum Kind { MAP, SEQ, SCALAR, NULL }

  /** A mapping entry; {@code key} is null when the key is not a plain string. */
  record Entry(String key, int keyLine, ConfigNode value) {}

  abstract Kind kind();

  abstract int line();

  List<Entry> entries() {
    return List.of();
  }

  List<ConfigNode> items() {
    return List.of();
  }

  /** The text of a scalar. */
  String scalar() {
    return null;
  }

  /**
   * For a resource (an element of a {@code resources} list): a key that is equal for equal
   * resources, so the loader can reuse what it parsed last time.
   */
  abstract String resourceKey() throws YamlTree.TreeException;

  /** For a resource: the value as a JSON tree, for the protobuf JSON parser. */
  abstract JsonElement json() throws YamlTree.TreeException;

  static ConfigNode yaml(Node node) {
    return new Yaml(node);
  }

  /** A snakeyaml node. Its resource key is the JSON it converts to, rendered compactly. */
  private static final class Yaml extends ConfigNode {
    final Node node;
    JsonElement json;
    List<Entry> entries;
    List<ConfigNode> items;

    Yaml(Node node) {
      this.node = node;
    }

    @Override
    Kind kind() {
      if (node instanceof MappingNode) {
        return Kind.MAP;
      }
      if (node instanceof SequenceNode) {
        return Kind.SEQ;
      }
      return ((ScalarNode) node).getTag().equals(Tag.NULL) ? Kind.NULL : Kind.SCALAR;
    }

    @Override
    int line() {
      return YamlTree.line(node);
    }

    @Override
    List<Entry> entries() {
      if (entries != null) {
        return entries;
      }
      if (!(node instanceof MappingNode m)) {
        return entries = List.of();
      }
      List<Entry> out = new ArrayList<>(m.getValue().size());
      for (NodeTuple t : m.getValue()) {
        String key = t.getKeyNode() instanceof ScalarNode s ? s.getValue() : null;
        out.add(new Entry(key, YamlTree.line(t.getKeyNode()), new Yaml(t.getValueNode())));
      }
      return entries = out;
    }

    @Override
    List<ConfigNode> items() {
      if (items != null) {
        return items;
      }
      if (!(node instanceof SequenceNode s)) {
        return items = List.of();
      }
      List<ConfigNode> out = new ArrayList<>(s.getValue().size());
      for (Node n : s.getValue()) {
        out.add(new Yaml(n));
      }
      return items = out;
    }

    @Override
    String scalar() {
      return node instanceof ScalarNode s ? s.getValue() : null;
    }

    @Override
    String resourceKey() throws YamlTree.TreeException {
      return json().toString();
    }

    @Override
    JsonElement json() throws YamlTree.TreeException {
      if (json == null) {
        json = YamlTree.toJson(node);
      }
      return json;
    }
  }
}
