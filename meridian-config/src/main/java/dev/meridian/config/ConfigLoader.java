package dev.meridian.config;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import dev.meridian.protocol.EnvoyTypeRegistry;
import dev.meridian.protocol.NodeMatcher;
import dev.meridian.protocol.ResourceType;
import dev.meridian.protocol.ServedConfig;
import dev.meridian.protocol.Snapshot;
import dev.meridian.protocol.XdsResource;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;

/**
 * Reads Meridian's config format (docs/config.md): a file, or a directory of {@code .yaml},
 * {@code .yml} and {@code .json} files, each with {@code resources} and optional {@code groups}.
 * A config with any problem is rejected as a whole, with every problem named.
 *
 * <p>Keeps the resources of the last good load, so a reload re-parses only resources whose text
 * changed and unchanged resources keep their identity (and their one serialization).
 */
public final class ConfigLoader {
  private static final String RESOURCE_WRAPPER =
      "type.googleapis.com/" + Resource.getDescriptor().getFullName();
  private static final Set<String> TOP_LEVEL_KEYS = Set.of("resources", "groups");
  private static final Set<String> GROUP_KEYS = Set.of("name", "match", "resources");
  private static final Map<String, String> MATCH_KEYS = Map.of(
      "node_id", "node_id", "nodeId", "node_id", "node_cluster", "node_cluster",
      "nodeCluster", "node_cluster");

  private final JsonFormat.Parser parser = EnvoyTypeRegistry.get().parser();
  private Map<String, XdsResource> cache = new HashMap<>();

  /** The result of a successful load. */
  public record Loaded(ServedConfig config, List<Path> files, int resources, int groups) {}

  public Loaded load(Path path) throws ConfigException {
    List<Path> files = files(path);
    Map<String, XdsResource> nextCache = new HashMap<>();
    List<String> problems = new ArrayList<>();
    Map<String, GroupDraft> groups = new LinkedHashMap<>();
    GroupDraft defaults = new GroupDraft(ServedConfig.DEFAULT_GROUP, null, null, 0);
    for (Path file : files) {
      String text;
      try {
        text = Files.readString(file, StandardCharsets.UTF_8);
      } catch (IOException e) {
        problems.add(file + ": cannot read: " + e.getMessage());
        continue;
      }
      new FileReader(file, nextCache, problems, defaults, groups).read(text);
    }
    if (!problems.isEmpty()) {
      throw new ConfigException(problems);
    }
    List<ServedConfig.Group> built = new ArrayList<>();
    int count = defaults.resources.size();
    for (GroupDraft g : groups.values()) {
      built.add(new ServedConfig.Group(g.name, g.matcher, Snapshot.of(g.resources)));
      count += g.resources.size();
    }
    cache = nextCache;
    return new Loaded(new ServedConfig(Snapshot.of(defaults.resources), built), files, count,
        built.size());
  }

  /** The config files at {@code path}: the file itself, or a directory's config files, sorted. */
  public static List<Path> files(Path path) throws ConfigException {
    if (!Files.exists(path)) {
      throw new ConfigException(path + ": no such file or directory");
    }
    if (!Files.isDirectory(path)) {
      return List.of(path);
    }
    try (Stream<Path> s = Files.list(path)) {
      return s.filter(p -> !p.getFileName().toString().startsWith("."))
          .filter(Files::isRegularFile)
          .filter(p -> {
            String n = p.getFileName().toString().toLowerCase(Locale.ROOT);
            return n.endsWith(".yaml") || n.endsWith(".yml") || n.endsWith(".json");
          })
          .sorted()
          .toList();
    } catch (IOException e) {
      throw new ConfigException(path + ": cannot list directory: " + e.getMessage());
    }
  }

  private static final class GroupDraft {
    final String name;
    final NodeMatcher matcher;
    final String origin;
    final int line;
    final List<XdsResource> resources = new ArrayList<>();
    final Map<String, String> seen = new HashMap<>(); // "type name" → where first defined

    GroupDraft(String name, NodeMatcher matcher, String origin, int line) {
      this.name = name;
      this.matcher = matcher;
      this.origin = origin;
      this.line = line;
    }
  }

  /** Reads one file into the drafts, adding every problem it finds. */
  private final class FileReader {
    final Path file;
    final Map<String, XdsResource> nextCache;
    final List<String> problems;
    final GroupDraft defaults;
    final Map<String, GroupDraft> groups;

    FileReader(Path file, Map<String, XdsResource> nextCache, List<String> problems,
        GroupDraft defaults, Map<String, GroupDraft> groups) {
      this.file = file;
      this.nextCache = nextCache;
      this.problems = problems;
      this.defaults = defaults;
      this.groups = groups;
    }

    void problem(int line, String message) {
      problems.add(file + ":" + line + ": " + message);
    }

    void read(String text) {
      Node root;
      try {
        root = YamlTree.compose(text);
      } catch (MarkedYAMLException e) {
        int line = e.getProblemMark() != null ? e.getProblemMark().getLine() + 1 : 1;
        problem(line, "invalid YAML: " + e.getProblem()
            + (e.getContext() != null ? " (" + e.getContext() + ")" : ""));
        return;
      } catch (YAMLException e) {
        problem(1, "invalid YAML: " + e.getMessage());
        return;
      }
      if (root == null) {
        return; // an empty file contributes nothing
      }
      if (!(root instanceof MappingNode top)) {
        problem(YamlTree.line(root), "the top level must be a mapping with 'resources' and/or 'groups'");
        return;
      }
      for (NodeTuple t : top.getValue()) {
        String key = ((ScalarNode) t.getKeyNode()).getValue();
        switch (key) {
          case "resources" -> readResources(t.getValueNode(), defaults, "resources");
          case "groups" -> readGroups(t.getValueNode());
          default -> problem(YamlTree.line(t.getKeyNode()), "unknown top-level key '" + key
              + "' (expected one of " + TOP_LEVEL_KEYS + ")");
        }
      }
    }

    void readGroups(Node node) {
      if (isNull(node)) {
        return;
      }
      if (!(node instanceof SequenceNode seq)) {
        problem(YamlTree.line(node), "'groups' must be a list");
        return;
      }
      for (int i = 0; i < seq.getValue().size(); i++) {
        Node g = seq.getValue().get(i);
        String where = "groups[" + i + "]";
        if (!(g instanceof MappingNode m)) {
          problem(YamlTree.line(g), where + " must be a mapping with name, match and resources");
          continue;
        }
        String name = null;
        Node match = null;
        Node resources = null;
        for (NodeTuple t : m.getValue()) {
          String key = ((ScalarNode) t.getKeyNode()).getValue();
          switch (key) {
            case "name" -> name = t.getValueNode() instanceof ScalarNode s ? s.getValue() : null;
            case "match" -> match = t.getValueNode();
            case "resources" -> resources = t.getValueNode();
            default -> problem(YamlTree.line(t.getKeyNode()), where + ": unknown key '" + key
                + "' (expected one of " + GROUP_KEYS + ")");
          }
        }
        if (name == null || name.isBlank()) {
          problem(YamlTree.line(g), where + ": missing 'name'");
          continue;
        }
        where = "group '" + name + "'";
        if (name.equals(ServedConfig.DEFAULT_GROUP)) {
          problem(YamlTree.line(g), where + ": the name '" + ServedConfig.DEFAULT_GROUP
              + "' is reserved for the top-level resources");
          continue;
        }
        NodeMatcher matcher = readMatch(match, g, where);
        if (matcher == null) {
          continue;
        }
        GroupDraft previous = groups.get(name);
        if (previous != null) {
          problem(YamlTree.line(g), where + ": defined twice (first at " + previous.origin + ":"
              + previous.line + ")");
          continue;
        }
        GroupDraft draft = new GroupDraft(name, matcher, file.toString(), YamlTree.line(g));
        groups.put(name, draft);
        if (resources != null) {
          readResources(resources, draft, where + " resources");
        }
      }
    }

    NodeMatcher readMatch(Node match, Node group, String where) {
      if (!(match instanceof MappingNode m) || m.getValue().isEmpty()) {
        problem(YamlTree.line(match == null ? group : match), where
            + ": 'match' must be a mapping with node_id and/or node_cluster globs");
        return null;
      }
      Map<String, String> globs = new HashMap<>();
      for (NodeTuple t : m.getValue()) {
        String key = ((ScalarNode) t.getKeyNode()).getValue();
        String canonical = MATCH_KEYS.get(key);
        if (canonical == null) {
          problem(YamlTree.line(t.getKeyNode()), where + ": unknown match key '" + key
              + "' (expected node_id or node_cluster)");
          return null;
        }
        if (!(t.getValueNode() instanceof ScalarNode s)) {
          problem(YamlTree.line(t.getValueNode()), where + ": match." + key + " must be a string glob");
          return null;
        }
        globs.put(canonical, s.getValue());
      }
      return new NodeMatcher(globs.get("node_id"), globs.get("node_cluster"));
    }

    void readResources(Node node, GroupDraft into, String where) {
      if (isNull(node)) {
        return;
      }
      if (!(node instanceof SequenceNode seq)) {
        problem(YamlTree.line(node), "'" + where + "' must be a list");
        return;
      }
      for (int i = 0; i < seq.getValue().size(); i++) {
        Node r = seq.getValue().get(i);
        String at = where + "[" + i + "]";
        int line = YamlTree.line(r);
        JsonElement json;
        try {
          json = YamlTree.toJson(r);
        } catch (YamlTree.TreeException e) {
          problem(e.line, at + ": " + e.getMessage());
          continue;
        }
        if (!json.isJsonObject()) {
          problem(line, at + ": a resource must be a mapping with '@type'");
          continue;
        }
        XdsResource resource = parse(json.getAsJsonObject(), at, line);
        if (resource == null) {
          continue;
        }
        String key = resource.type().name() + " " + resource.name();
        String first = into.seen.putIfAbsent(key, file + ":" + line);
        if (first != null) {
          problem(line, at + " (" + resource.type().typeUrl() + " '" + resource.name()
              + "'): duplicate name within " + (into.matcher == null ? "the default resources"
                  : "group '" + into.name + "'") + " (first defined at " + first + ")");
          continue;
        }
        into.resources.add(resource);
      }
    }

    XdsResource parse(JsonObject json, String at, int line) {
      String cacheKey = json.toString();
      XdsResource cached = cache.get(cacheKey);
      if (cached == null) {
        cached = nextCache.get(cacheKey);
      }
      if (cached != null) {
        nextCache.put(cacheKey, cached);
        return cached;
      }
      String typeUrl = typeOf(json);
      if (typeUrl == null) {
        problem(line, at + ": missing '@type' (e.g. \"@type\": "
            + ResourceType.CLUSTER.typeUrl() + ")");
        return null;
      }
      com.google.protobuf.Duration ttl = null;
      List<String> aliases = List.of();
      JsonObject body = json;
      if (typeUrl.equals(RESOURCE_WRAPPER)) {
        JsonObject wrapper = json.deepCopy();
        wrapper.remove("@type");
        JsonElement inner = wrapper.remove("resource");
        if (inner == null || !inner.isJsonObject()) {
          problem(line, at + ": the Resource wrapper needs a 'resource' with '@type'");
          return null;
        }
        Resource.Builder rb = Resource.newBuilder();
        try {
          parser.merge(wrapper.toString(), rb);
        } catch (InvalidProtocolBufferException e) {
          problem(line, at + " (" + RESOURCE_WRAPPER + "): " + e.getMessage());
          return null;
        }
        if (rb.hasTtl()) {
          ttl = rb.getTtl();
        }
        aliases = rb.getAliasesList();
        body = inner.getAsJsonObject();
        typeUrl = typeOf(body);
        if (typeUrl == null) {
          problem(line, at + ".resource: missing '@type'");
          return null;
        }
      }
      ResourceType type = ResourceType.fromTypeUrl(typeUrl).orElse(null);
      if (type == null) {
        String hint = typeUrl.startsWith(ResourceType.TYPE_URL_PREFIX)
            && EnvoyTypeRegistry.get().find(typeUrl.substring(ResourceType.TYPE_URL_PREFIX.length())) != null
            ? "a known message, but not a resource type" : "unknown type";
        problem(line, at + ": '@type' " + typeUrl + " is " + hint + "; resource types are "
            + String.join(", ", ResourceType.all().stream().map(ResourceType::typeUrl).toList()));
        return null;
      }
      JsonObject fields = body.deepCopy();
      fields.remove("@type");
      Message.Builder b = type.defaultInstance().newBuilderForType();
      try {
        parser.merge(fields.toString(), b);
      } catch (InvalidProtocolBufferException | RuntimeException e) {
        problem(line, at + " (" + type.typeUrl() + nameHint(fields) + "): " + e.getMessage());
        return null;
      }
      Message message = b.build();
      String name = type.nameOf(message);
      if (name.isEmpty()) {
        problem(line, at + " (" + type.typeUrl() + "): missing "
            + (type == ResourceType.ENDPOINT ? "'cluster_name'" : "'name'"));
        return null;
      }
      XdsResource resource = XdsResource.of(type, message, ttl, aliases);
      nextCache.put(cacheKey, resource);
      return resource;
    }
  }

  private static String typeOf(JsonObject json) {
    JsonElement t = json.get("@type");
    return t instanceof JsonPrimitive p && p.isString() ? p.getAsString() : null;
  }

  private static String nameHint(JsonObject fields) {
    for (String k : List.of("name", "cluster_name", "clusterName")) {
      JsonElement e = fields.get(k);
      if (e instanceof JsonPrimitive p && p.isString()) {
        return " '" + p.getAsString() + "'";
      }
    }
    return "";
  }

  private static boolean isNull(Node node) {
    return node instanceof ScalarNode s && s.getTag().equals(org.yaml.snakeyaml.nodes.Tag.NULL);
  }
}
