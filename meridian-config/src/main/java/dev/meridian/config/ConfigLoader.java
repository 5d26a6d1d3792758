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
import dev.meridian.protocol.TypeResolver;
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
import org.yaml.snakeyaml.nodes.Node;

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

  private Map<String, XdsResource> cache = new HashMap<>();
  /** What the last load served: its snapshots of unchanged types are kept (Snapshot.of). */
  private ServedConfig last = ServedConfig.empty();

  /** The result of a successful load. */
  public record Loaded(ServedConfig config, List<Path> files, int resources, int groups,
      long loadMillis) {}

  public Loaded load(Path path) throws ConfigException {
    return load(read(path));
  }

  /**
   * The config files at a path as read once (the watcher digests the same bytes it loads): each
   * file's bytes, or why it could not be read.
   */
  public record Contents(List<Path> files, Map<Path, byte[]> bytes, Map<Path, String> unreadable) {
    /** SHA-256 over the names and bytes: equal for identical content. */
    public byte[] digest() {
      try {
        java.security.MessageDigest d = java.security.MessageDigest.getInstance("SHA-256");
        for (Path p : files) {
          d.update(p.toString().getBytes(StandardCharsets.UTF_8));
          byte[] b = bytes.get(p);
          d.update(b != null ? b : ("unreadable:" + unreadable.get(p)).getBytes(StandardCharsets.UTF_8));
        }
        return d.digest();
      } catch (java.security.NoSuchAlgorithmException e) {
        throw new IllegalStateException(e);
      }
    }
  }

  /** Reads the config files at {@code path}; a file that cannot be read is a problem of the load. */
  public static Contents read(Path path) throws ConfigException {
    List<Path> files = files(path);
    Map<Path, byte[]> bytes = new HashMap<>();
    Map<Path, String> unreadable = new HashMap<>();
    for (Path f : files) {
      try {
        bytes.put(f, Files.readAllBytes(f));
      } catch (IOException e) {
        unreadable.put(f, String.valueOf(e.getMessage()));
      }
    }
    return new Contents(files, bytes, unreadable);
  }

  public Loaded load(Contents contents) throws ConfigException {
    long started = System.nanoTime();
    List<Path> files = contents.files();
    Map<String, XdsResource> nextCache = new HashMap<>();
    List<String> problems = new ArrayList<>();
    Map<String, GroupDraft> groups = new LinkedHashMap<>();
    GroupDraft defaults = new GroupDraft(ServedConfig.DEFAULT_GROUP, null, null, 0);
    for (Path file : files) {
      String text;
      try {
        byte[] b = contents.bytes().get(file);
        if (b == null) {
          throw new IOException(contents.unreadable().get(file));
        }
        text = StandardCharsets.UTF_8.newDecoder().decode(java.nio.ByteBuffer.wrap(b)).toString();
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
      built.add(new ServedConfig.Group(g.name, g.matcher,
          Snapshot.of(g.resources, last.snapshot(g.name))));
      count += g.resources.size();
    }
    cache = nextCache;
    last = new ServedConfig(Snapshot.of(defaults.resources, last.defaults()), built);
    return new Loaded(last, files, count, built.size(),
        (System.nanoTime() - started) / 1_000_000);
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
      ConfigNode root = JsonConfig.read(text); // strict JSON: the fast path
      if (root == null) {
        Node yaml;
        try {
          yaml = YamlTree.compose(text);
        } catch (MarkedYAMLException e) {
          int line = e.getProblemMark() != null ? e.getProblemMark().getLine() + 1 : 1;
          problem(line, "invalid YAML: " + e.getProblem()
              + (e.getContext() != null ? " (" + e.getContext() + ")" : ""));
          return;
        } catch (YAMLException e) {
          problem(1, "invalid YAML: " + e.getMessage());
          return;
        }
        if (yaml == null) {
          return; // an empty file contributes nothing
        }
        root = ConfigNode.yaml(yaml);
      }
      if (root.kind() != ConfigNode.Kind.MAP) {
        problem(root.line(), "the top level must be a mapping with 'resources' and/or 'groups'");
        return;
      }
      for (ConfigNode.Entry t : root.entries()) {
        String key = t.key();
        if (key == null) {
          problem(t.keyLine(), "mapping keys must be plain strings");
          continue;
        }
        if (duplicate(root, t, "")) {
          continue;
        }
        switch (key) {
          case "resources" -> readResources(t.value(), defaults, "resources");
          case "groups" -> readGroups(t.value());
          default -> problem(t.keyLine(), "unknown top-level key '" + key
              + "' (expected one of " + TOP_LEVEL_KEYS + ")");
        }
      }
    }

    void readGroups(ConfigNode node) {
      if (node.kind() == ConfigNode.Kind.NULL) {
        return;
      }
      if (node.kind() != ConfigNode.Kind.SEQ) {
        problem(node.line(), "'groups' must be a list");
        return;
      }
      List<ConfigNode> items = node.items();
      for (int i = 0; i < items.size(); i++) {
        ConfigNode g = items.get(i);
        String where = "groups[" + i + "]";
        if (g.kind() != ConfigNode.Kind.MAP) {
          problem(g.line(), where + " must be a mapping with name, match and resources");
          continue;
        }
        String name = null;
        ConfigNode match = null;
        ConfigNode resources = null;
        for (ConfigNode.Entry t : g.entries()) {
          String key = String.valueOf(t.key());
          if (duplicate(g, t, where + ": ")) {
            continue;
          }
          switch (key) {
            case "name" -> name = t.value().scalar();
            case "match" -> match = t.value();
            case "resources" -> resources = t.value();
            default -> problem(t.keyLine(), where + ": unknown key '" + key
                + "' (expected one of " + GROUP_KEYS + ")");
          }
        }
        if (name == null || name.isBlank()) {
          problem(g.line(), where + ": missing 'name'");
          continue;
        }
        where = "group '" + name + "'";
        if (name.equals(ServedConfig.DEFAULT_GROUP)) {
          problem(g.line(), where + ": the name '" + ServedConfig.DEFAULT_GROUP
              + "' is reserved for the top-level resources");
          continue;
        }
        NodeMatcher matcher = readMatch(match, g, where);
        if (matcher == null) {
          continue;
        }
        GroupDraft previous = groups.get(name);
        if (previous != null) {
          problem(g.line(), where + ": defined twice (first at " + previous.origin + ":"
              + previous.line + ")");
          continue;
        }
        GroupDraft draft = new GroupDraft(name, matcher, file.toString(), g.line());
        groups.put(name, draft);
        if (resources != null) {
          readResources(resources, draft, where + " resources");
        }
      }
    }

    NodeMatcher readMatch(ConfigNode match, ConfigNode group, String where) {
      if (match == null || match.kind() != ConfigNode.Kind.MAP || match.entries().isEmpty()) {
        problem((match == null ? group : match).line(), where
            + ": 'match' must be a mapping with node_id and/or node_cluster globs");
        return null;
      }
      Map<String, String> globs = new HashMap<>();
      for (ConfigNode.Entry t : match.entries()) {
        String key = String.valueOf(t.key());
        if (duplicate(match, t, where + ": match: ")) {
          return null;
        }
        String canonical = MATCH_KEYS.get(key);
        if (canonical == null) {
          problem(t.keyLine(), where + ": unknown match key '" + key
              + "' (expected node_id or node_cluster)");
          return null;
        }
        String glob = t.value().scalar();
        if (glob == null) {
          problem(t.value().line(), where + ": match." + key + " must be a string glob");
          return null;
        }
        globs.put(canonical, glob);
      }
      return new NodeMatcher(globs.get("node_id"), globs.get("node_cluster"));
    }

    /** Reports {@code t} if an earlier entry of {@code map} has the same key. */
    boolean duplicate(ConfigNode map, ConfigNode.Entry t, String where) {
      for (ConfigNode.Entry e : map.entries()) {
        if (e == t) {
          return false;
        }
        if (java.util.Objects.equals(e.key(), t.key())) {
          problem(t.keyLine(), where + "duplicate key '" + t.key() + "' (first at line "
              + e.keyLine() + ")");
          return true;
        }
      }
      return false;
    }

    void readResources(ConfigNode node, GroupDraft into, String where) {
      if (node.kind() == ConfigNode.Kind.NULL) {
        return;
      }
      if (node.kind() != ConfigNode.Kind.SEQ) {
        problem(node.line(), "'" + where + "' must be a list");
        return;
      }
      List<ConfigNode> items = node.items();
      for (int i = 0; i < items.size(); i++) {
        ConfigNode r = items.get(i);
        String at = where + "[" + i + "]";
        int line = r.line();
        XdsResource resource;
        try {
          resource = parse(r, at, line);
        } catch (YamlTree.TreeException e) {
          problem(e.line, at + ": " + e.getMessage());
          continue;
        }
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

    /** The resource of a {@code resources} element: the last load's if its text is unchanged. */
    XdsResource parse(ConfigNode node, String at, int line) throws YamlTree.TreeException {
      String cacheKey = node.resourceKey();
      XdsResource cached = cache.get(cacheKey);
      if (cached == null) {
        cached = nextCache.get(cacheKey);
      }
      if (cached != null) {
        nextCache.put(cacheKey, cached);
        return cached;
      }
      JsonElement element = node.json();
      if (!element.isJsonObject()) {
        problem(line, at + ": a resource must be a mapping with '@type'");
        return null;
      }
      JsonObject json = element.getAsJsonObject();
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
          parser(wrapper).merge(wrapper.toString(), rb);
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
        parser(fields).merge(fields.toString(), b);
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

  /**
   * A parser that knows the types of the resource's {@code Any}s. Issue 18: only the types a
   * config names are built, not all of Envoy's API, which cost a start a quarter of a second.
   */
  private static JsonFormat.Parser parser(JsonObject json) {
    Set<String> types = new java.util.HashSet<>();
    anyTypes(json, types);
    return TypeResolver.shared().parserFor(types);
  }

  private static void anyTypes(JsonElement e, Set<String> into) {
    if (e.isJsonObject()) {
      for (Map.Entry<String, JsonElement> m : e.getAsJsonObject().entrySet()) {
        if (m.getKey().equals("@type") && m.getValue() instanceof JsonPrimitive p && p.isString()) {
          into.add(p.getAsString());
        } else {
          anyTypes(m.getValue(), into);
        }
      }
    } else if (e.isJsonArray()) {
      for (JsonElement item : e.getAsJsonArray()) {
        anyTypes(item, into);
      }
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

}
