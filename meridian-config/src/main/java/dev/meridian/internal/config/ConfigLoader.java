package dev.meridian.internal.config;

import com.google.protobuf.Message;
import dev.meridian.internal.protocol.XdstpName;
import dev.meridian.internal.protocol.NodeMatcher;
import dev.meridian.internal.protocol.SecretAccess;
import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.internal.protocol.Snapshot;
import dev.meridian.internal.protocol.Leds;
import dev.meridian.internal.protocol.XdsResource;
import dev.meridian.internal.pgv.PgvRules;
import dev.meridian.internal.pgv.Step;
import dev.meridian.internal.pgv.Violation;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Reads Meridian's config format (docs/config.md): a file, or a directory of {@code .yaml},
 * {@code .yml} and {@code .json} files, each with {@code resources} and optional {@code groups}.
 * A config with any problem is rejected as a whole, with every problem named.
 *
 * <p>Keeps the resources of the last good load, so a reload re-parses only resources whose text
 * changed and unchanged resources keep their identity (and their one serialization). How many
 * resources it had to build, each serialized once, is {@link #resourcesSerialized()}.
 */
public final class ConfigLoader {
  private static final String RESOURCE_WRAPPER =
      "type.googleapis.com/" + Resource.getDescriptor().getFullName();
  // Lists: the order they are named in messages is stable.
  private static final List<String> TOP_LEVEL_KEYS = List.of("resources", "groups",
      "secret_access");
  private static final List<String> SECRET_ACCESS_KEYS = List.of("secrets", "identities");
  private static final List<String> GROUP_KEYS = List.of("name", "match", "resources");
  private static final Map<String, String> MATCH_KEYS = Map.of(
      "node_id", "node_id", "nodeId", "node_id", "node_cluster", "node_cluster",
      "nodeCluster", "node_cluster", "identity", "identity");

  private Map<String, XdsResource> cache = new HashMap<>();
  /** The last good load's YAML files as cut into resources, by file: reused for the same text. */
  private Map<String, Outlined> outlines = new HashMap<>();
  /** The current load's; they replace {@link #outlines} when it succeeds. */
  private Map<String, Outlined> nextOutlines = new HashMap<>();

  private record Outlined(byte[] bytes, String text, ConfigNode root) {}

  /** Fewer new resources than this are built one by one: not worth waking other threads. */
  private static final int PREBUILD_MIN = 64;
  /** Resources the current load built in parallel ahead of its walk ({@code prebuild}). */
  private final Map<String, XdsResource> prebuilt =
      new java.util.concurrent.ConcurrentHashMap<>();
  /** The message types this loader's loads have read (the server keeps one loader). */
  private final MessageTypes types = new MessageTypes();

  /**
   * Envoy's rules ({@link RuleCheck}), checked on each resource as it is built: a reload checks
   * only the resources whose text changed. Null when the checks are off.
   */
  private final PgvRules rules;

  /** A loader that checks Envoy's rules ({@link RuleCheck#ENVOY}). */
  public ConfigLoader() {
    this(RuleCheck.ENVOY);
  }

  public ConfigLoader(RuleCheck ruleCheck) {
    this.rules = ruleCheck.rules(types::find, java.time.Clock.systemUTC());
  }

  /**
   * A loader that already knows these resources by their stored text ({@link StoreValues}):
   * {@link #loadStored} reuses them instead of parsing the same text again. They were checked
   * when first built, with {@code ruleCheck}.
   */
  public ConfigLoader(Map<String, XdsResource> byStoredText, RuleCheck ruleCheck) {
    this(ruleCheck);
    cache = new HashMap<>(byStoredText);
  }
  /** What the last load served: its snapshots of unchanged types are kept (Snapshot.of). */
  private ServedConfig last = ServedConfig.empty();
  /** Resources built (and so serialized) by this loader's loads; read by other threads. */
  private final java.util.concurrent.atomic.AtomicLong serialized =
      new java.util.concurrent.atomic.AtomicLong();

  /** The result of a successful load. */
  public record Loaded(ServedConfig config, List<Path> files, int resources, int groups,
      long loadMillis) {}

  public Loaded load(Path path) throws ConfigException {
    return load(read(path));
  }

  /**
   * How many resources this loader has built over all its loads, failed ones included: each is
   * serialized once, when it is built ({@link XdsResource#of}); every response that carries it
   * reuses those bytes. A resource whose text is unchanged since the last good load is reused,
   * not built again: so this grows by the new and changed resources of each load. The server
   * exposes it as {@code meridian_resources_serialized_total}. Thread-safe.
   */
  public long resourcesSerialized() {
    return serialized.get();
  }

  /**
   * The config files at a path as read once (the watcher digests the same bytes it loads): each
   * file's bytes, or why it could not be read; and how each was read, so that the next read can
   * skip a file that has not changed since ({@link #read(Path, Contents)}).
   */
  public record Contents(List<Path> files, Map<Path, byte[]> bytes, Map<Path, String> unreadable,
      Map<Path, FileRead> reads) {
    public Contents(List<Path> files, Map<Path, byte[]> bytes, Map<Path, String> unreadable) {
      this(files, bytes, unreadable, Map.of());
    }

    /** SHA-256 over the names and bytes: equal for identical content. */
    public byte[] digest() {
      java.security.MessageDigest d = sha256();
      for (Path p : files) {
        d.update(p.toString().getBytes(StandardCharsets.UTF_8));
        byte[] b = bytes.get(p);
        FileRead r = reads.get(p);
        d.update(b == null ? ("unreadable:" + unreadable.get(p)).getBytes(StandardCharsets.UTF_8)
            : r != null && r.bytes() == b ? r.digest() : sha256().digest(b));
      }
      return d.digest();
    }
  }

  /**
   * One file as read: its stamp just before, the wall-clock time of the read and its bytes; their
   * SHA-256 is worked out when first asked for (the watcher asks, a one-off load does not) and
   * kept while the bytes are reused.
   */
  public static final class FileRead {
    private final FileStamp stamp;
    private final long readAtEpochNanos;
    private final byte[] bytes;
    private volatile byte[] digest;

    public FileRead(FileStamp stamp, long readAtEpochNanos, byte[] bytes) {
      this.stamp = stamp;
      this.readAtEpochNanos = readAtEpochNanos;
      this.bytes = bytes;
    }

    public FileStamp stamp() {
      return stamp;
    }

    public long readAtEpochNanos() {
      return readAtEpochNanos;
    }

    public byte[] bytes() {
      return bytes;
    }

    public byte[] digest() {
      byte[] d = digest;
      if (d == null) {
        digest = d = sha256().digest(bytes);
      }
      return d;
    }

    /** The same bytes, found unchanged by a read at {@code readAtEpochNanos}. */
    FileRead readAgainAt(long readAtEpochNanos) {
      FileRead again = new FileRead(stamp, readAtEpochNanos, bytes);
      again.digest = digest;
      return again;
    }
  }

  /**
   * Whether {@code f} holds exactly {@code held}, read through a small buffer: a file read again
   * only to make sure it did not change costs no array of its size.
   */
  static boolean sameBytes(Path f, byte[] held) throws IOException {
    try (java.io.InputStream in = Files.newInputStream(f)) {
      byte[] buf = new byte[64 * 1024];
      int at = 0;
      for (int n; (n = in.read(buf)) >= 0; at += n) {
        if (n > held.length - at || !Arrays.equals(buf, 0, n, held, at, at + n)) {
          return false;
        }
      }
      return at == held.length;
    }
  }

  /** A file's size, modification time, identity (inode) and symlink target. */
  public record FileStamp(long size, long modifiedNanos, Object key, String link) {
    /** The stamp of {@code p}, following symlinks (a ConfigMap's swapped link is a new file). */
    public static FileStamp of(Path p) throws IOException {
      java.nio.file.attribute.BasicFileAttributes a =
          Files.readAttributes(p, java.nio.file.attribute.BasicFileAttributes.class);
      return new FileStamp(a.size(), a.lastModifiedTime().to(java.util.concurrent.TimeUnit.NANOSECONDS),
          a.fileKey(), Files.isSymbolicLink(p) ? p.toRealPath().toString() : null);
    }
  }

  /**
   * How long after its modification time a file's stamp is trusted to show every later write: a
   * write within the file system's clock tick of the read may leave the stamp as it was (git's
   * "racily clean" entries), so such a file is read again next time. Two seconds: the coarsest
   * modification times in use (FAT; 1 s on ext3, HFS+ and some network file systems), and room
   * for a network file server's clock being off from ours.
   */
  static final long RACY_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(2);

  private static java.security.MessageDigest sha256() {
    try {
      return java.security.MessageDigest.getInstance("SHA-256");
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Reads the config files at {@code path}; a file that cannot be read is a problem of the load. */
  public static Contents read(Path path) throws ConfigException {
    return read(path, null);
  }

  /**
   * As {@link #read(Path)}, reading again only the files that changed since {@code previous}
   * (issue 23: a directory reload costs the changed files): a file whose stamp (size,
   * modification time, inode, link target) is the one it had when read, and which had not been
   * modified within {@link #RACY_NANOS} of that read, keeps the bytes read then.
   */
  public static Contents read(Path path, Contents previous) throws ConfigException {
    List<Path> files = files(path);
    Map<Path, byte[]> bytes = new HashMap<>();
    Map<Path, String> unreadable = new HashMap<>();
    Map<Path, FileRead> reads = new HashMap<>();
    for (Path f : files) {
      try {
        FileStamp stamp = FileStamp.of(f);
        FileRead was = previous == null ? null : previous.reads().get(f);
        if (was != null && was.stamp().equals(stamp)
            && was.readAtEpochNanos() - stamp.modifiedNanos() > RACY_NANOS) {
          bytes.put(f, was.bytes());
          reads.put(f, was);
          continue;
        }
        java.time.Instant now = java.time.Instant.now();
        long readAt = now.getEpochSecond() * 1_000_000_000L + now.getNano();
        if (was != null && was.stamp().equals(stamp) && sameBytes(f, was.bytes())) {
          // Racily clean (just written, as every reload's file is) but unchanged: the bytes held
          // stay, so the watcher's second read costs no new copy of the file (nor its digest).
          bytes.put(f, was.bytes());
          reads.put(f, was.readAgainAt(readAt));
          continue;
        }
        byte[] b = Files.readAllBytes(f);
        bytes.put(f, b);
        reads.put(f, new FileRead(stamp, readAt, b));
      } catch (IOException e) {
        unreadable.put(f, String.valueOf(e.getMessage()));
      }
    }
    return new Contents(files, bytes, unreadable, reads);
  }

  public Loaded load(Contents contents) throws ConfigException {
    long started = System.nanoTime();
    nextOutlines = new HashMap<>();
    List<Path> files = contents.files();
    Map<String, XdsResource> nextCache = new HashMap<>();
    List<String> problems = new ArrayList<>();
    Map<String, GroupDraft> groups = new LinkedHashMap<>();
    GroupDraft defaults = new GroupDraft(ServedConfig.DEFAULT_GROUP, null, null, 0);
    List<SecretAccess.Rule> access = new ArrayList<>();
    for (Path file : files) {
      FileReader reader = new FileReader(file.toString(), isJson(file), nextCache, problems,
          defaults, groups, access);
      byte[] b = contents.bytes().get(file);
      Outlined same = outlines.get(file.toString());
      if (same != null && same.bytes == b) {
        nextOutlines.put(file.toString(), same); // the very bytes read last time: not decoded again
        reader.read(same.root);
        continue;
      }
      if (b == null) {
        problems.add(file + ": cannot read: " + contents.unreadable().get(file));
        continue;
      }
      String text;
      try {
        text = decode(b);
      } catch (ConfigNode.Invalid e) {
        problems.add(file + ":" + e.line + ":" + e.column + ": " + e.getMessage());
        continue;
      }
      reader.bytes = b;
      reader.read(text);
    }
    prebuilt.clear(); // left over only from resources the walk did not take (a duplicate)
    return assemble(files, defaults, groups.values(), access, nextCache, problems, started);
  }

  /** Builds the served config from the drafts, or throws every problem found. */
  private Loaded assemble(List<Path> files, GroupDraft defaults, Iterable<GroupDraft> groups,
      List<SecretAccess.Rule> access, Map<String, XdsResource> nextCache, List<String> problems,
      long started) throws ConfigException {
    if (!problems.isEmpty()) {
      throw new ConfigException(problems);
    }
    List<ServedConfig.Group> built = new ArrayList<>();
    int count = defaults.resources.size();
    for (GroupDraft g : groups) {
      built.add(new ServedConfig.Group(g.name, g.matcher,
          Snapshot.of(g.resources, last.snapshot(g.name))));
      count += g.resources.size();
    }
    cache = nextCache;
    outlines = nextOutlines;
    SecretAccess secretAccess = access.isEmpty() ? SecretAccess.NONE : new SecretAccess(access);
    if (secretAccess.equals(last.secretAccess())) {
      secretAccess = last.secretAccess(); // the same rules: streams keep their Secret views
    }
    last = new ServedConfig(Snapshot.of(defaults.resources, last.defaults()), built, secretAccess);
    return new Loaded(last, files, count, built.size(),
        (System.nanoTime() - started) / 1_000_000);
  }

  /**
   * Loads a config kept in a key-value store under {@code layout}'s prefix: one key per resource,
   * one per group definition, one for {@code secret_access} (docs/etcd.md). Every value is strict
   * JSON. A problem names its key ({@code KEY:LINE:COLUMN: ...}); any problem rejects the whole
   * config, as for files. A value unchanged since the last good load reuses the resource built
   * then, so a reload costs what changed.
   *
   * @param entries every key under the prefix (full keys) and its value
   */
  public Loaded loadStored(StoreLayout layout, Map<String, String> entries)
      throws ConfigException {
    long started = System.nanoTime();
    nextOutlines = new HashMap<>();
    Map<String, XdsResource> nextCache = new HashMap<>();
    List<String> problems = new ArrayList<>();
    List<GroupDraft> groups = new ArrayList<>();
    Map<String, Integer> order = new HashMap<>();
    GroupDraft defaults = new GroupDraft(ServedConfig.DEFAULT_GROUP, null, null, 0);
    List<SecretAccess.Rule> access = new ArrayList<>();
    List<Map.Entry<String, StoreLayout.ResourceKey>> resources = new ArrayList<>();
    for (Map.Entry<String, String> e : new java.util.TreeMap<>(entries).entrySet()) {
      String key = e.getKey();
      FileReader reader = new FileReader(key, true, nextCache, problems, defaults, Map.of(),
          access);
      StoreLayout.Key parsed = layout.parse(key);
      if (parsed instanceof StoreLayout.ResourceKey r) {
        resources.add(Map.entry(key, r));
      } else if (parsed instanceof StoreLayout.GroupKey g) {
        GroupDraft draft = reader.readStoredGroup(g.group(), e.getValue(), order);
        if (draft != null) {
          groups.add(draft);
        }
      } else if (parsed instanceof StoreLayout.SecretAccessKey) {
        ConfigNode root = reader.readValue(e.getValue());
        if (root != null) {
          reader.readSecretAccess(root);
        }
      } else {
        problems.add(key + ": " + ((StoreLayout.Unknown) parsed).why());
      }
    }
    // Groups are tried in their stored order, then by name (the order of the files they came from).
    groups.sort(java.util.Comparator.<GroupDraft>comparingInt(g -> order.get(g.name))
        .thenComparing(g -> g.name));
    Map<String, GroupDraft> byName = new HashMap<>();
    groups.forEach(g -> byName.put(g.name, g));
    for (Map.Entry<String, StoreLayout.ResourceKey> e : resources) {
      String key = e.getKey();
      StoreLayout.ResourceKey r = e.getValue();
      GroupDraft into = r.group().equals(ServedConfig.DEFAULT_GROUP) ? defaults
          : byName.get(r.group());
      if (into == null) {
        problems.add(key + ": group '" + r.group() + "' is not defined (no key "
            + layout.groupKey(r.group()) + ")");
        continue;
      }
      FileReader reader = new FileReader(key, true, nextCache, problems, defaults, Map.of(),
          access);
      String value = entries.get(key);
      XdsResource resource = reader.cached(value);
      if (resource == null) {
        ConfigNode tree = reader.readValue(value);
        resource = tree == null ? null : reader.build(value, tree, "resource");
      }
      if (resource == null) {
        continue;
      }
      String xdstp = XdstpName.problemAsResourceName(resource.name(), resource.type().typeUrl());
      if (xdstp != null) {
        problems.add(key + ": " + xdstp);
        continue;
      }
      if (resource.type() != r.type() || !resource.name().equals(r.name())) {
        problems.add(key + ": holds " + resource.type().shortName() + " '" + resource.name()
            + "', which belongs at " + layout.resourceKey(r.group(), resource.type(),
                resource.name()));
        continue;
      }
      into.resources.add(resource);
    }
    return assemble(List.of(), defaults, groups, access, nextCache, problems, started);
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
      return s.filter(p -> isConfigName(p.getFileName()))
          .filter(Files::isRegularFile)
          .sorted()
          .toList();
    } catch (IOException e) {
      throw new ConfigException(path + ": cannot list directory: " + e.getMessage());
    }
  }

  /** Whether a directory's entry of this name is a config file (not hidden, YAML or JSON). */
  static boolean isConfigName(Path fileName) {
    String n = fileName.toString().toLowerCase(Locale.ROOT);
    return !n.startsWith(".") && (n.endsWith(".yaml") || n.endsWith(".yml") || n.endsWith(".json"));
  }

  /** Where a resource was defined; its line is read only when a duplicate needs it. */
  private record Defined(String file, ConfigNode node) {}

  private static final class GroupDraft {
    final String name;
    final NodeMatcher matcher;
    final String origin;
    final int line;
    final List<XdsResource> resources = new ArrayList<>();
    final Map<String, Defined> seen = new HashMap<>(); // "type name" → where first defined

    GroupDraft(String name, NodeMatcher matcher, String origin, int line) {
      this.name = name;
      this.matcher = matcher;
      this.origin = origin;
      this.line = line;
    }
  }

  /** Reads one file into the drafts, adding every problem it finds. */
  private final class FileReader {
    /** Where problems say they are: a file's path, or a store's key. */
    final String file;
    final boolean json;
    final Map<String, XdsResource> nextCache;
    final List<String> problems;
    final GroupDraft defaults;
    final Map<String, GroupDraft> groups;
    final List<SecretAccess.Rule> access;
    /** The file's bytes, when read from a file: the same array next time skips decoding. */
    byte[] bytes;

    FileReader(String file, boolean json, Map<String, XdsResource> nextCache,
        List<String> problems, GroupDraft defaults, Map<String, GroupDraft> groups,
        List<SecretAccess.Rule> access) {
      this.access = access;
      this.file = file;
      this.json = json;
      this.nextCache = nextCache;
      this.problems = problems;
      this.defaults = defaults;
      this.groups = groups;
    }

    /** FILE:LINE:COLUMN: MESSAGE, the line and column of the offending key or value. */
    void problem(int line, int column, String message) {
      problems.add(file + ":" + line + ":" + column + ": " + message);
    }

    void problem(ConfigNode at, String message) {
      problem(at.line(), at.column(), message);
    }

    void problem(ConfigNode.Entry at, String message) {
      problem(at.keyLine(), at.keyColumn(), message);
    }

    void read(String text) {
      ConfigNode root;
      Outlined last = outlines.get(file);
      try {
        // A .json file is strict JSON (RFC 8259), never read again as YAML (issue 18). A YAML
        // file that is strict JSON takes the same fast reader, with YAML's meaning.
        root = last != null && last.text.equals(text) ? last.root
            : json ? JsonConfig.readJson(text) : yaml(text);
      } catch (ConfigNode.Invalid e) {
        problem(e.line, e.column, e.getMessage());
        return;
      }
      if (root != null && !YamlTree.isYamlTree(root)) {
        // Kept for the next load while the text stays the same (not a whole YAML tree: a node
        // per value of the file is more than an unchanged file is worth).
        nextOutlines.put(file, new Outlined(bytes, text, root));
      }
      read(root);
    }

    void read(ConfigNode root) {
      if (root == null) {
        return; // an empty file contributes nothing
      }
      if (root.kind() != ConfigNode.Kind.MAP) {
        problem(root, "the top level must be a mapping with 'resources' and/or 'groups'");
        return;
      }
      prebuild(root);
      for (ConfigNode.Entry t : root.entries()) {
        String key = t.key();
        if (key == null) {
          problem(t, "mapping keys must be plain strings");
          continue;
        }
        if (duplicate(root, t, "")) {
          continue;
        }
        switch (key) {
          case "resources" -> readResources(t.value(), defaults, "resources");
          case "groups" -> readGroups(t.value());
          case "secret_access" -> readSecretAccess(t.value());
          default -> problem(t, "unknown top-level key '" + key + "' (expected one of "
              + TOP_LEVEL_KEYS + ")" + didYouMean(key, TOP_LEVEL_KEYS));
        }
      }
    }

    /**
     * A YAML file's tree: as strict JSON if it is that, else cut into its resources' texts
     * ({@link YamlOutline}; the same text as last time reuses that reading), else read whole.
     */
    ConfigNode yaml(String text) throws ConfigNode.Invalid {
      ConfigNode root = JsonConfig.readYamlAsJson(text);
      if (root == null) {
        root = YamlOutline.read(text, key -> cache.containsKey(key) || nextCache.containsKey(key));
      }
      return root != null ? root : YamlTree.read(text);
    }

    /**
     * Builds the file's new resources on every core before the walk below takes them in order:
     * a file whose every resource changed (or a first load) reads in a fraction of the time. A
     * resource with a problem is left for the walk, which reports it where it stands.
     */
    void prebuild(ConfigNode root) {
      List<ConfigNode> fresh = new ArrayList<>();
      // One set for the whole file: a text in the defaults and in a group (or in two groups) is
      // built once, as the walk would, not once per list with all but one copy thrown away.
      Set<String> seen = new java.util.HashSet<>();
      for (ConfigNode.Entry t : root.entries()) {
        if ("resources".equals(t.key())) {
          collectNew(t.value(), fresh, seen);
        } else if ("groups".equals(t.key())) {
          for (ConfigNode g : t.value().items()) {
            for (ConfigNode.Entry ge : g.entries()) {
              if ("resources".equals(ge.key())) {
                collectNew(ge.value(), fresh, seen);
              }
            }
          }
        }
      }
      if (fresh.size() < PREBUILD_MIN) {
        return;
      }
      fresh.parallelStream().forEach(r -> {
        try {
          String key = r.resourceKey();
          XdsResource resource = new FileReader(file, json, new HashMap<>(2),
              new ArrayList<>(), defaults, Map.of(), new ArrayList<>()).build(key, r.tree(), "");
          if (resource != null) {
            prebuilt.put(key, resource);
          }
        } catch (RuntimeException e) {
          // the walk meets the same resource and deals with it as it always has
        }
      });
    }

    private void collectNew(ConfigNode list, List<ConfigNode> into, Set<String> seen) {
      for (ConfigNode r : list.items()) {
        String key;
        try {
          key = r.resourceKey();
        } catch (RuntimeException e) {
          continue; // left to the walk
        }
        if (!cache.containsKey(key) && !nextCache.containsKey(key) && seen.add(key)) {
          into.add(r);
        }
      }
    }

    /** A stored value's JSON tree; null (a problem added) if it is not one value of JSON. */
    ConfigNode readValue(String text) {
      try {
        ConfigNode root = JsonConfig.readJson(text);
        if (root == null) {
          problem(1, 1, "the value is empty");
        }
        return root;
      } catch (ConfigNode.Invalid e) {
        problem(e.line, e.column, e.getMessage());
        return null;
      }
    }

    /** A stored group definition, {@code {"match": {...}, "order": N}}; null after a problem. */
    GroupDraft readStoredGroup(String name, String text, Map<String, Integer> order) {
      ConfigNode root = readValue(text);
      if (root == null) {
        return null;
      }
      String where = "group '" + name + "'";
      if (root.kind() != ConfigNode.Kind.MAP) {
        problem(root, where + ": a group definition must be a mapping with 'match'");
        return null;
      }
      if (name.equals(ServedConfig.DEFAULT_GROUP)) {
        problem(root, where + ": the name '" + ServedConfig.DEFAULT_GROUP
            + "' is reserved for the top-level resources");
        return null;
      }
      ConfigNode match = null;
      int position = 0;
      for (ConfigNode.Entry t : root.entries()) {
        String key = String.valueOf(t.key());
        if (duplicate(root, t, where + ": ")) {
          return null;
        }
        switch (key) {
          case "match" -> match = t.value();
          case "order" -> {
            try {
              position = Integer.parseInt(String.valueOf(t.value().scalar()));
            } catch (NumberFormatException e) {
              problem(t.value(), where + ": 'order' must be an integer");
              return null;
            }
          }
          default -> {
            problem(t, where + ": unknown key '" + key + "' (expected match, order)"
                + didYouMean(key, List.of("match", "order")));
            return null;
          }
        }
      }
      NodeMatcher matcher = readMatch(match, root, where);
      if (matcher == null) {
        return null;
      }
      order.put(name, position);
      return new GroupDraft(name, matcher, file, root.line());
    }

    void readGroups(ConfigNode node) {
      if (node.kind() == ConfigNode.Kind.NULL) {
        return;
      }
      if (node.kind() != ConfigNode.Kind.SEQ) {
        problem(node, "'groups' must be a list");
        return;
      }
      List<ConfigNode> items = node.items();
      for (int i = 0; i < items.size(); i++) {
        ConfigNode g = items.get(i);
        String where = "groups[" + i + "]";
        if (g.kind() != ConfigNode.Kind.MAP) {
          problem(g, where + " must be a mapping with name, match and resources");
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
            default -> problem(t, where + ": unknown key '" + key
                + "' (expected one of " + GROUP_KEYS + ")" + didYouMean(key, GROUP_KEYS));
          }
        }
        if (name == null || name.isBlank()) {
          problem(g, where + ": missing 'name'");
          continue;
        }
        where = "group '" + name + "'";
        if (name.equals(ServedConfig.DEFAULT_GROUP)) {
          problem(g, where + ": the name '" + ServedConfig.DEFAULT_GROUP
              + "' is reserved for the top-level resources");
          continue;
        }
        NodeMatcher matcher = readMatch(match, g, where);
        if (matcher == null) {
          continue;
        }
        GroupDraft previous = groups.get(name);
        if (previous != null) {
          problem(g, where + ": defined twice (first at " + previous.origin + ":"
              + previous.line + ")");
          continue;
        }
        GroupDraft draft = new GroupDraft(name, matcher, file, g.line());
        groups.put(name, draft);
        if (resources != null) {
          readResources(resources, draft, where + " resources");
        }
      }
    }

    /**
     * {@code secret_access}: who may receive which Secret (issue 20; docs/security.md), a list of
     * {@code {secrets: GLOB, identities: [GLOB, ...]}}.
     */
    void readSecretAccess(ConfigNode node) {
      if (node.kind() == ConfigNode.Kind.NULL) {
        return;
      }
      if (node.kind() != ConfigNode.Kind.SEQ) {
        problem(node, "'secret_access' must be a list of {secrets: GLOB, identities: [GLOB, ...]}");
        return;
      }
      List<ConfigNode> items = node.items();
      for (int i = 0; i < items.size(); i++) {
        ConfigNode rule = items.get(i);
        String where = "secret_access[" + i + "]";
        if (rule.kind() != ConfigNode.Kind.MAP) {
          problem(rule, where + " must be a mapping {secrets: GLOB, identities: [GLOB, ...]}");
          continue;
        }
        String secrets = null;
        List<String> identities = null;
        for (ConfigNode.Entry t : rule.entries()) {
          String key = String.valueOf(t.key());
          if (duplicate(rule, t, where + ": ")) {
            continue;
          }
          switch (key) {
            case "secrets" -> {
              secrets = t.value().scalar();
              if (secrets == null || secrets.isEmpty()) {
                problem(t.value(), where + ": 'secrets' must be a glob of Secret names");
              }
            }
            case "identities" -> {
              identities = new ArrayList<>();
              if (t.value().kind() != ConfigNode.Kind.SEQ || t.value().items().isEmpty()) {
                problem(t.value(), where + ": 'identities' must be a non-empty list of globs, "
                    + "e.g. [\"spiffe://example.org/ns/payments/*\"]");
                identities = null;
              } else {
                for (ConfigNode id : t.value().items()) {
                  String glob = id.scalar();
                  if (glob == null || glob.isEmpty()) {
                    problem(id, where + ": each identity must be a string glob");
                  } else if (dev.meridian.internal.protocol.Identity.globProblem(glob) != null) {
                    problem(id, where + ": " + dev.meridian.internal.protocol.Identity.globProblem(glob));
                  } else {
                    identities.add(glob);
                  }
                }
              }
            }
            default -> problem(t, where + ": unknown key '" + key + "' (expected one of "
                + SECRET_ACCESS_KEYS + ")" + didYouMean(key, SECRET_ACCESS_KEYS));
          }
        }
        if (secrets == null) {
          problem(rule, where + ": missing 'secrets'");
        } else if (identities == null) {
          problem(rule, where + ": missing 'identities'");
        } else if (!secrets.isEmpty() && !identities.isEmpty()) {
          access.add(new SecretAccess.Rule(secrets, identities));
        }
      }
    }

    NodeMatcher readMatch(ConfigNode match, ConfigNode group, String where) {
      if (match == null || match.kind() != ConfigNode.Kind.MAP || match.entries().isEmpty()) {
        problem(match == null ? group : match, where
            + ": 'match' must be a mapping with node_id, node_cluster and/or identity globs");
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
          problem(t, where + ": unknown match key '" + key
              + "' (expected node_id, node_cluster or identity)"
              + didYouMean(key, MATCH_KEYS.keySet()));
          return null;
        }
        String glob = t.value().scalar();
        if (glob == null) {
          problem(t.value(), where + ": match." + key + " must be a string glob");
          return null;
        }
        if (canonical.equals("identity")
            && dev.meridian.internal.protocol.Identity.globProblem(glob) != null) {
          problem(t.value(), where + ": match." + key + ": "
              + dev.meridian.internal.protocol.Identity.globProblem(glob));
          return null;
        }
        globs.put(canonical, glob);
      }
      return new NodeMatcher(globs.get("node_id"), globs.get("node_cluster"),
          globs.get("identity"));
    }

    /** Reports {@code t} if an earlier entry of {@code map} has the same key. */
    boolean duplicate(ConfigNode map, ConfigNode.Entry t, String where) {
      for (ConfigNode.Entry e : map.entries()) {
        if (e == t) {
          return false;
        }
        if (java.util.Objects.equals(e.key(), t.key())) {
          problem(t, where + "duplicate key '" + t.key() + "' (first at line "
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
        problem(node, "'" + where + "' must be a list");
        return;
      }
      List<ConfigNode> items = node.items();
      for (int i = 0; i < items.size(); i++) {
        ConfigNode r = items.get(i);
        String at = where + "[" + i + "]";
        XdsResource resource = parse(r, at);
        if (resource == null) {
          continue;
        }
        String xdstp = XdstpName.problemAsResourceName(resource.name(), resource.type().typeUrl());
        if (xdstp != null) {
          problem(r, at + ": " + xdstp); // issue 26: requests match xdstp names canonically
          continue;
        }
        String key = resource.type().name() + " " + resource.name();
        Defined first = into.seen.putIfAbsent(key, new Defined(file, r));
        if (first != null) {
          problem(r, at + " (" + resource.type().typeUrl() + " '" + resource.name()
              + "'): duplicate name within " + (into.matcher == null ? "the default resources"
                  : "group '" + into.name + "'") + " (first defined at " + first.file + ":"
              + first.node.line() + ")");
          continue;
        }
        into.resources.add(resource);
      }
    }

    /** The resource of a {@code resources} element: the last load's if its text is unchanged. */
    XdsResource parse(ConfigNode node, String at) {
      String cacheKey = node.resourceKey();
      XdsResource cached = cached(cacheKey);
      return cached != null ? cached : build(cacheKey, node.tree(), at);
    }

    /** The resource last built from the same text, if any; kept for the next load. */
    XdsResource cached(String cacheKey) {
      XdsResource cached = cache.get(cacheKey);
      if (cached == null) {
        cached = nextCache.get(cacheKey);
      }
      if (cached == null) {
        cached = prebuilt.remove(cacheKey);
      }
      if (cached != null) {
        nextCache.put(cacheKey, cached);
      }
      return cached;
    }

    /** Builds (and serializes, once) the resource of {@code tree}; null after a problem. */
    XdsResource build(String cacheKey, ConfigNode tree, String at) {
      if (tree.unsupported() != null) {
        problem(tree, at + ": " + tree.unsupported());
        return null;
      }
      if (tree.kind() != ConfigNode.Kind.MAP) {
        problem(tree, at + ": a resource must be a mapping with '@type'");
        return null;
      }
      String typeUrl = typeOf(tree);
      if (typeUrl == null) {
        problem(tree, at + ": missing '@type' (e.g. \"@type\": "
            + ResourceType.CLUSTER.typeUrl() + ")");
        return null;
      }
      MessageReader reader = new MessageReader(types);
      com.google.protobuf.Duration ttl = null;
      List<String> aliases = List.of();
      String wrapperName = null; // the Resource wrapper's 'name', if any
      ConfigNode body = tree;
      String path = "";
      if (typeUrl.equals(RESOURCE_WRAPPER)) {
        Resource.Builder rb = Resource.newBuilder();
        reader.read(tree, rb, Set.of("@type", "resource"), "");
        if (report(reader, at + " (" + RESOURCE_WRAPPER + ")")) {
          return null;
        }
        body = entry(tree, "resource");
        if (body == null || body.kind() != ConfigNode.Kind.MAP) {
          problem(body != null ? body : tree, at + ": the Resource wrapper needs a 'resource' with"
              + " '@type'");
          return null;
        }
        if (rb.hasTtl()) {
          ttl = rb.getTtl();
        }
        aliases = rb.getAliasesList();
        wrapperName = rb.getName().isEmpty() ? null : rb.getName();
        typeUrl = typeOf(body);
        if (typeUrl == null) {
          problem(body, at + ".resource: missing '@type'");
          return null;
        }
        path = "resource";
      }
      ResourceType type = ResourceType.fromTypeUrl(typeUrl).orElse(null);
      if (type == null) {
        String hint = typeUrl.startsWith(ResourceType.TYPE_URL_PREFIX)
            && types.find(typeUrl.substring(ResourceType.TYPE_URL_PREFIX.length())) != null
            ? "a known message, but not a resource type" : "unknown type";
        ConfigNode typeNode = entry(body, "@type");
        Set<String> known = new java.util.LinkedHashSet<>(
            ResourceType.all().stream().map(ResourceType::typeUrl).toList());
        String suggestion = didYouMean(typeUrl, known);
        problem(typeNode, at + ": '@type' " + typeUrl + " is " + hint + (suggestion.isEmpty()
            ? "; resource types are " + String.join(", ", known) : suggestion));
        return null;
      }
      Message.Builder b = type.defaultInstance().newBuilderForType();
      reader.read(body, b, Set.of("@type"), path);
      if (report(reader, at + " (" + type.typeUrl() + nameHint(body) + ")")) {
        return null;
      }
      Message message = b.build();
      String name = type.hasOwnName() ? type.nameOf(message) : wrapperName;
      if (!type.hasOwnName()) {
        // An LbEndpoint (LEDS, issue 26) has no name field: the Resource wrapper names it, as
        // it does on the wire (DeltaDiscoveryResponse's Resource.name).
        if (name == null) {
          problem(tree, at + " (" + type.typeUrl() + "): an LbEndpoint has no name field; wrap it"
              + " in a Resource with a 'name': {\"@type\": " + RESOURCE_WRAPPER + ", name: xdstp://"
              + "AUTHORITY/" + Leds.TYPE + "/PATH/NAME, resource: {...}}");
          return null;
        }
        String p = Leds.problemAsEndpointName(name);
        if (p != null) {
          problem(entry(tree, "name"), at + " (" + type.typeUrl() + " '" + name + "'): " + p);
          return null;
        }
      } else if (name.isEmpty()) {
        problem(body, at + " (" + type.typeUrl() + "): missing "
            + (type == ResourceType.ENDPOINT ? "'cluster_name'" : "'name'"));
        return null;
      } else if (wrapperName != null && !wrapperName.equals(name)) {
        // The body names the resource; a different wrapper name would be silently a second one.
        problem(entry(tree, "name"), at + " (" + type.typeUrl() + " '" + name + "'): the"
            + " Resource wrapper's name '" + wrapperName + "' is not the resource's own name;"
            + " leave it out, or write the same name");
        return null;
      }
      if (type == ResourceType.ENDPOINT && !ledsProblems((ClusterLoadAssignment) message, body,
          at + " (" + type.typeUrl() + " '" + name + "')", path)) {
        return null;
      }
      String named = type.messageClass().getSimpleName() + " " + name;
      if (rules != null && !ruleProblems(message, body, named)) {
        return null;
      }
      XdsResource resource = XdsResource.named(type, name, message, ttl, aliases);
      serialized.incrementAndGet();
      nextCache.put(cacheKey, resource);
      return resource;
    }

    /**
     * Envoy LEDS (issue 26): each locality's {@code leds_collection_name} must be a glob collection
     * of LbEndpoints ({@link Leds#problems}), reported at the name's line; false if any is not.
     */
    boolean ledsProblems(ClusterLoadAssignment cla, ConfigNode body, String what, String path) {
      List<Leds.Problem> found = Leds.problems(cla);
      for (Leds.Problem p : found) {
        ConfigNode locality = field(body, "endpoints");
        locality = locality != null && locality.kind() == ConfigNode.Kind.SEQ
            && p.locality() < locality.items().size() ? locality.items().get(p.locality()) : null;
        ConfigNode leds = locality == null ? null : field(locality, "leds_cluster_locality_config");
        ConfigNode at = leds == null ? null : field(leds, "leds_collection_name");
        if (at == null) {
          at = leds != null ? leds : locality != null ? locality : body;
        }
        problem(at, what + ": " + (path.isEmpty() ? "" : path + ".") + "endpoints["
            + p.locality() + "].leds_cluster_locality_config: " + p.message());
      }
      return found.isEmpty();
    }

    /**
     * Envoy's rules ({@link RuleCheck}): each broken rule is reported at the value that breaks
     * it, or where the missing value would go; false if any is broken.
     */
    boolean ruleProblems(Message message, ConfigNode body, String what) {
      List<Violation> found = rules.check(message);
      for (Violation v : found) {
        problem(locate(body, v.path()), what + ": " + v);
      }
      return found.isEmpty();
    }

    /** Adds the reader's problems, each at its own line and column; true if there were any. */
    boolean report(MessageReader reader, String what) {
      for (MessageReader.Problem p : reader.problems()) {
        problem(p.line(), p.column(), what + ": " + (p.path().isEmpty() ? "" : p.path() + ": ")
            + p.message());
      }
      return !reader.problems().isEmpty();
    }
  }

  /**
   * UTF-8, strictly: a malformed byte is an error, not a replacement character. A file that is
   * not text (an image, an archive, UTF-16) is named as such, at its first byte that is not
   * UTF-8 text, so that a wrong --config path reads as one.
   */
  static String decode(byte[] b) throws ConfigNode.Invalid {
    boolean ascii = true;
    for (byte x : b) {
      if (x == 0) {
        ascii = false; // text never holds a NUL: found below, with its position
        break;
      }
      ascii &= x >= 0;
    }
    if (ascii) {
      return new String(b, StandardCharsets.US_ASCII); // most configs: no copy through a CharBuffer
    }
    java.nio.charset.CharsetDecoder d = StandardCharsets.UTF_8.newDecoder();
    java.nio.ByteBuffer in = java.nio.ByteBuffer.wrap(b);
    java.nio.CharBuffer out = java.nio.CharBuffer.allocate(b.length);
    java.nio.charset.CoderResult r = d.decode(in, out, true);
    if (!r.isError()) {
      r = d.flush(out);
    }
    int nul = indexOfNul(b, r.isError() ? in.position() : b.length);
    if (nul >= 0 || r.isError()) {
      throw notText(b, nul >= 0 ? nul : in.position());
    }
    return out.flip().toString();
  }

  private static int indexOfNul(byte[] b, int end) {
    for (int i = 0; i < end; i++) {
      if (b[i] == 0) {
        return i;
      }
    }
    return -1;
  }

  /** Says where {@code b} stops being UTF-8 text, and what it looks like instead. */
  private static ConfigNode.Invalid notText(byte[] b, int at) {
    int lineStart = 0;
    int line = 1;
    for (int i = 0; i < at; i++) {
      if (b[i] == '\n') {
        line++;
        lineStart = i + 1;
      }
    }
    String before = new String(b, lineStart, at - lineStart, StandardCharsets.UTF_8);
    int column = before.codePointCount(0, before.length()) + 1;
    String what = String.format("byte 0x%02X at offset %d", b[at] & 0xff, at)
        + (b[at] == 0 ? " is a NUL, which text never holds" : " is not valid UTF-8");
    String looks = looksLike(b);
    return new ConfigNode.Invalid(line, column, "not UTF-8 text: " + what
        + (looks != null ? " (" + looks + ")" : "")
        + "; a config file is YAML or JSON text in UTF-8: is this the file you meant?");
  }

  /** What a file that is not UTF-8 text seems to be, from its first bytes; null if unknown. */
  private static String looksLike(byte[] b) {
    if (starts(b, 0xFF, 0xFE) || starts(b, 0xFE, 0xFF)) {
      return "it starts with a UTF-16 byte order mark: save it as UTF-8";
    }
    if (starts(b, 0x89, 'P', 'N', 'G')) {
      return "it looks like a PNG image";
    }
    if (starts(b, 0xFF, 0xD8, 0xFF)) {
      return "it looks like a JPEG image";
    }
    if (starts(b, 0x1F, 0x8B)) {
      return "it looks gzip-compressed";
    }
    if (starts(b, 'P', 'K', 3, 4)) {
      return "it looks like a zip archive";
    }
    if (starts(b, 0x7F, 'E', 'L', 'F')) {
      return "it looks like a program (ELF)";
    }
    return null;
  }

  private static boolean starts(byte[] b, int... prefix) {
    if (b.length < prefix.length) {
      return false;
    }
    for (int i = 0; i < prefix.length; i++) {
      if ((b[i] & 0xff) != prefix[i]) {
        return false;
      }
    }
    return true;
  }

  private static boolean isJson(Path file) {
    return file.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".json");
  }

  private static ConfigNode entry(ConfigNode map, String key) {
    for (ConfigNode.Entry e : map.entries()) {
      if (key.equals(e.key())) {
        return e.value();
      }
    }
    return null;
  }

  /** The value of a field written snake_case or lowerCamelCase, or null. */
  private static ConfigNode field(ConfigNode map, String snake) {
    ConfigNode v = entry(map, snake);
    if (v == null) {
      StringBuilder camel = new StringBuilder();
      for (int i = 0; i < snake.length(); i++) {
        char c = snake.charAt(i);
        if (c == '_' && i + 1 < snake.length()) {
          camel.append(Character.toUpperCase(snake.charAt(++i)));
        } else {
          camel.append(c);
        }
      }
      v = entry(map, camel.toString());
    }
    return v;
  }

  /**
   * The node a rule's path leads to in a resource's tree, or the deepest one on the way (a
   * missing field is reported at the mapping it is missing from). A message packed in an Any is
   * written beside its {@code @type}, so its fields are looked up in the Any's own mapping.
   */
  static ConfigNode locate(ConfigNode body, List<Step> path) {
    ConfigNode at = body;
    for (Step s : path) {
      ConfigNode next = null;
      if (s instanceof Step.Field f && at.kind() == ConfigNode.Kind.MAP) {
        next = field(at, f.name());
      } else if (s instanceof Step.Index i && at.kind() == ConfigNode.Kind.SEQ
          && i.index() < at.items().size()) {
        next = at.items().get(i.index());
      } else if (s instanceof Step.Key k && at.kind() == ConfigNode.Kind.MAP) {
        next = entry(at, k.key());
      }
      if (next == null) {
        return at;
      }
      at = next;
    }
    return at;
  }

  private static String typeOf(ConfigNode map) {
    ConfigNode t = entry(map, "@type");
    return t != null && t.kind() == ConfigNode.Kind.SCALAR ? t.scalar() : null;
  }

  private static String nameHint(ConfigNode map) {
    for (String k : List.of("name", "cluster_name", "clusterName")) {
      ConfigNode n = entry(map, k);
      if (n != null && n.kind() == ConfigNode.Kind.SCALAR) {
        return " '" + n.scalar() + "'";
      }
    }
    return "";
  }

  /** "; did you mean `x`?" for the known name closest to {@code key}, if close; else "". */
  private static String didYouMean(String key, java.util.Collection<String> known) {
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String k : known.stream().sorted().toList()) {
      int d = Suggest.distance(key, k);
      if (d < bestDistance) {
        best = k;
        bestDistance = d;
      }
    }
    return best == null ? "" : "; did you mean `" + best + "`?";
  }
}
