package dev.meridian.internal.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.OneofDescriptor;
import com.google.protobuf.DescriptorProtos.FieldOptions;
import com.google.protobuf.DescriptorProtos.OneofOptions;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.ExtensionRegistry;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import dev.meridian.internal.pgv.PgvRules;
import dev.meridian.internal.pgv.Violation;
import dev.meridian.internal.protocol.EnvoyTypeRegistry;
import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.internal.protocol.TypeResolver;
import dev.meridian.internal.protocol.XdsResource;
import dev.meridian.xds.ResourceType;
import io.envoyproxy.pgv.validate.Validate;
import io.envoyproxy.pgv.validate.Validate.FieldRules;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/**
 * Envoy checks every resource against the protoc-gen-validate rules of its API protos and NACKs
 * the whole response for one broken rule. The corpus (envoy-rules/) holds real resources that each
 * break exactly one rule Envoy's protos annotate, beside a neighbour with that one thing fixed:
 * {@link PgvRules} must find the one and only that, and nothing in the neighbour (neither lax nor
 * over-strict). The configs the project ships and tests with must break no rule at all.
 */
class EnvoyRulesCorpusTest {
  private static final Path CORPUS =
      Path.of("src/test/resources/dev/meridian/internal/config/envoy-rules");
  private static final Path REPO = Path.of("..");

  /** {@code # expect: Cluster payments-bad: connect_timeout duration.gt} */
  private static final Pattern EXPECT =
      Pattern.compile("(?m)^# expect: (\\w+) (.+?): (\\S+) ([a-z0-9]+\\.[a-z_]+)$");
  private static final Pattern RULE_HEADER = Pattern.compile("(?m)^# rule: (\\S+)$");

  private static final TypeResolver TYPES = new TypeResolver(EnvoyTypeRegistry::get);
  private static PgvRules rules;

  /** Shipped configs that break a rule knowingly ("where: Type name: field rule"), and why. */
  private static final Map<String, String> KNOWN = Map.of();

  record Case(Path file, String ruleHeader, String type, String name, String field, String rule) {}

  static Stream<Arguments> cases() {
    return corpus().stream().map(c -> Arguments.of(Named.of(c.file().getFileName().toString(), c)));
  }

  static List<Case> corpus() {
    try (Stream<Path> files = Files.list(CORPUS)) {
      return files.filter(p -> p.toString().endsWith(".yaml")).sorted().map(p -> {
        String text = read(p);
        Matcher m = EXPECT.matcher(text);
        Matcher r = RULE_HEADER.matcher(text);
        assertThat(m.find()).as("%s has an '# expect:' line", p).isTrue();
        assertThat(r.find()).as("%s has a '# rule:' line", p).isTrue();
        return new Case(p, r.group(1), m.group(1), m.group(2), m.group(3), m.group(4));
      }).toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static synchronized PgvRules rules() {
    if (rules == null) {
      rules = new PgvRules(url -> TYPES.find(url.substring(url.lastIndexOf('/') + 1)),
          Clock.systemUTC());
    }
    return rules;
  }

  /** Every resource of every group, by "Type name" (the message's own name, as in the corpus). */
  private static Map<String, Message> resources(ServedConfig config) {
    Map<String, Message> out = new TreeMap<>();
    for (String group : config.groupNames()) {
      for (ResourceType t : ResourceType.values()) {
        for (XdsResource r : config.snapshot(group).get(t).list()) {
          String prefix = group.equals(ServedConfig.DEFAULT_GROUP) ? "" : "group " + group + ": ";
          out.put(prefix + r.message().getDescriptorForType().getName() + " " + r.name(),
              r.message());
        }
      }
    }
    return out;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void eachCaseBreaksExactlyItsOneRuleAndItsNeighbourNone(Case c) throws Exception {
    Map<String, Message> all = resources(new ConfigLoader(RuleCheck.OFF).load(c.file()).config());
    String bad = c.type() + " " + c.name();
    assertThat(all).as("the resource the case expects").containsKey(bad);
    assertThat(all.keySet().stream().filter(k -> !k.equals(bad) && k.startsWith(c.type() + " ")))
        .as("a valid neighbour of the same type").isNotEmpty();
    assertThat(c.rule()).as("the '# rule:' header").isEqualTo(c.ruleHeader());

    List<Violation> found = rules().check(all.get(bad));
    assertThat(found).as("violations in %s", bad).hasSize(1);
    assertThat(found.get(0).field()).as("field of %s", found.get(0)).isEqualTo(c.field());
    assertThat(found.get(0).rule()).as("rule of %s", found.get(0)).isEqualTo(c.rule());
    all.forEach((name, message) -> {
      if (!name.equals(bad)) {
        assertThat(rules().check(message)).as("violations in the neighbour %s", name).isEmpty();
      }
    });
  }

  /**
   * The loader runs the same rules where config enters ({@code --validation envoy}): the case's
   * file is refused whole with exactly one problem, the one the case expects, placed at a line of
   * the bad resource, and named as docs/config.md says (TYPE NAME: PATH: ... (RULE)).
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void theLoaderRefusesEachCaseWithItsOneProblemAtItsLine(Case c) throws Exception {
    ConfigException e = org.junit.jupiter.api.Assertions.assertThrows(ConfigException.class,
        () -> new ConfigLoader().load(c.file()));
    assertThat(e.problems()).hasSize(1);
    String p = e.problems().get(0);
    assertThat(p).startsWith(c.file().toString() + ":")
        .contains(": " + c.type() + " " + c.name() + ": " + c.field() + ": ")
        .endsWith("(" + c.rule() + ")");
    int line = Integer.parseInt(p.substring(c.file().toString().length() + 1).split(":")[0]);
    List<String> lines = Files.readAllLines(c.file());
    int start = -1;
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).matches(".*\\bname: \"?" + Pattern.quote(c.name()) + "\"?\\s*,?\\s*$")
          || lines.get(i).matches(".*cluster_name: \"?" + Pattern.quote(c.name()) + "\"?\\s*$")) {
        start = i + 1;
        break;
      }
    }
    assertThat(line).as("line of %s", p).isPositive().isLessThanOrEqualTo(lines.size());
    if (start > 0) {
      assertThat(line).as("line of %s, the resource named at line %d", p, start)
          .isGreaterThanOrEqualTo(start - 3);
    }
  }

  /**
   * Guards the corpus itself, engine aside: the expected rule is one Envoy's protos annotate on
   * the field the path reaches (read from the descriptors of the API jar), and the resource has
   * that field set the way the path says.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void eachExpectedRuleIsOneEnvoysProtosAnnotateAtThatField(Case c) throws Exception {
    Map<String, Message> all = resources(new ConfigLoader(RuleCheck.OFF).load(c.file()).config());
    Message bad = all.get(c.type() + " " + c.name());
    assertThat(bad).as("the resource the case expects").isNotNull();
    assertThat(annotatedRules(bad, c.field())).as("rules annotated at %s", c.field())
        .contains(c.rule());
  }

  @Test
  void theCorpusCoversEveryResourceTypeWithAtLeast45Cases() {
    List<Case> cases = corpus();
    assertThat(cases).hasSizeGreaterThanOrEqualTo(45);
    // A Runtime's one rule (name: min_len 1) is met by the loader first; see the test below.
    assertThat(cases.stream().map(Case::type).collect(Collectors.toSet())).contains("Listener",
        "RouteConfiguration", "ScopedRouteConfiguration", "VirtualHost", "Cluster",
        "ClusterLoadAssignment", "Secret", "TypedExtensionConfig", "LbEndpoint");
    assertThat(cases.stream().map(c -> c.rule().substring(0, c.rule().indexOf('.')))
        .collect(Collectors.toSet())).contains("duration", "uint32", "uint64", "double", "string",
        "enum", "message", "repeated", "map", "oneof", "any", "bool");
  }

  /** Runtime.name: min_len 1 (envoy/service/runtime/v3/rtds.proto), its only rule. */
  @Test
  void aRuntimeWithoutANameIsRefusedByTheLoaderAndANamedOneBreaksNoRule(@TempDir Path dir)
      throws Exception {
    Path nameless = Files.writeString(dir.resolve("nameless.yaml"), """
        resources:
          - { "@type": type.googleapis.com/envoy.service.runtime.v3.Runtime, name: "", layer: { a: 1 } }
        """);
    assertThatThrownBy(() -> new ConfigLoader().load(nameless))
        .isInstanceOf(ConfigException.class).hasMessageContaining("missing 'name'");
    Path named = Files.writeString(dir.resolve("named.yaml"), """
        resources:
          - "@type": type.googleapis.com/envoy.service.runtime.v3.Runtime
            name: feature-flags
            layer: { health_check: { min_interval: 5 }, routing: { canary_percent: 10 } }
        """);
    Message runtime = new ConfigLoader(RuleCheck.OFF).load(named).config().defaults()
        .get(ResourceType.RUNTIME).get("feature-flags").message();
    assertThat(rules().check(runtime)).isEmpty();
  }

  @Test
  void theBundledExamplesBreakNoRule(@TempDir Path dir) throws Exception {
    List<Path> files = configFiles(REPO.resolve("examples"));
    Map<String, List<String>> found = new TreeMap<>();
    int loaded = 0;
    for (Path f : files) {
      loaded += check(f, REPO.relativize(f).toString(), found) ? 1 : 0;
    }
    // The Kubernetes ConfigMap carries a config in its data.
    Path configMap = REPO.resolve("deploy/kubernetes/single/configmap.yaml");
    Object doc = new Load(LoadSettings.builder().build()).loadFromString(read(configMap));
    Map<?, ?> data = (Map<?, ?>) ((Map<?, ?>) doc).get("data");
    for (Map.Entry<?, ?> e : data.entrySet()) {
      Path f = Files.writeString(dir.resolve(e.getKey().toString()), e.getValue().toString());
      loaded += check(f, REPO.relativize(configMap) + " data." + e.getKey(), found) ? 1 : 0;
    }
    assertThat(loaded).as("example configs loaded").isGreaterThanOrEqualTo(3);
    assertOnlyKnown(found);
  }

  @Test
  void theDocsConfigBlocksThatLoadBreakNoRule(@TempDir Path dir) throws Exception {
    List<Path> docs = new ArrayList<>();
    try (Stream<Path> s = Files.list(REPO.resolve("docs"))) {
      s.filter(p -> p.toString().endsWith(".md")).sorted().forEach(docs::add);
    }
    docs.add(REPO.resolve("README.md"));
    Pattern block = Pattern.compile("(?ms)^([ \\t]*)```(yaml|json)\\n(.*?)^[ \\t]*```");
    Map<String, List<String>> found = new TreeMap<>();
    int loaded = 0;
    int n = 0;
    for (Path doc : docs) {
      Matcher m = block.matcher(read(doc));
      while (m.find()) {
        String indent = m.group(1);
        String body = m.group(3).lines()
            .map(l -> l.startsWith(indent) ? l.substring(indent.length()) : l)
            .collect(Collectors.joining("\n", "", "\n"));
        Path f = Files.writeString(dir.resolve("block" + n++ + "." + m.group(2)), body);
        String where = REPO.relativize(doc) + ":" + lineOf(read(doc), m.start());
        loaded += check(f, where, found) ? 1 : 0;
      }
    }
    // Most blocks are fragments (a probe, a transport socket); config.md's LEDS block is whole.
    assertThat(loaded).as("docs blocks that are whole configs").isGreaterThanOrEqualTo(1);
    assertOnlyKnown(found);
  }

  /**
   * Every .yaml/.yml/.json under any module's src/test/resources that ConfigLoader takes as a
   * config (the others are other inputs, or invalid on purpose), the corpus's bad cases aside.
   */
  @Test
  void theTestSuitesConfigFilesBreakNoRule() throws Exception {
    List<Path> files = new ArrayList<>();
    try (Stream<Path> modules = Files.list(REPO)) {
      for (Path m : modules.sorted().toList()) {
        Path res = m.resolve("src/test/resources");
        if (Files.isDirectory(res)) {
          files.addAll(configFiles(res));
        }
      }
    }
    Map<String, List<String>> found = new TreeMap<>();
    int loaded = 0;
    for (Path f : files) {
      if (!f.toAbsolutePath().normalize().startsWith(CORPUS.toAbsolutePath().normalize())) {
        loaded += check(f, REPO.relativize(f).toString(), found) ? 1 : 0;
      }
    }
    // Four today: ConfigLoaderFuzzTest's seeds that are valid configs.
    assertThat(loaded).as("test config files loaded").isGreaterThanOrEqualTo(4);
    assertOnlyKnown(found);
  }

  /** The line of a block's first line of content (after its fence). */
  private static int lineOf(String text, int fenceOffset) {
    return (int) text.substring(0, fenceOffset).chars().filter(ch -> ch == '\n').count() + 2;
  }

  /** Loads {@code f}; false if ConfigLoader refuses it; else puts each violation under where. */
  private static boolean check(Path f, String where, Map<String, List<String>> found) {
    ServedConfig config;
    try {
      config = new ConfigLoader(RuleCheck.OFF).load(f).config();
    } catch (ConfigException e) {
      return false;
    }
    resources(config).forEach((name, message) -> {
      for (Violation v : rules().check(message)) {
        found.computeIfAbsent(where + ": " + name, k -> new ArrayList<>())
            .add(v.field() + " " + v.rule());
      }
    });
    return true;
  }

  private static void assertOnlyKnown(Map<String, List<String>> found) {
    Set<String> seen = new TreeSet<>();
    found.forEach((where, vs) -> vs.forEach(v -> seen.add(where + ": " + v)));
    assertThat(seen).as("violations in shipped configs (each: engine too strict, or a config"
        + " Envoy would NACK)").isSubsetOf(KNOWN.keySet());
  }

  private static List<Path> configFiles(Path root) throws IOException {
    try (Stream<Path> s = Files.walk(root)) {
      return s.filter(Files::isRegularFile)
          .filter(p -> !p.toString().contains("/target/"))
          .filter(p -> p.toString().matches(".*\\.(yaml|yml|json)$"))
          .sorted().toList();
    }
  }

  private static String read(Path p) {
    try {
      return Files.readString(p, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  // ---- The rules the API jar's descriptors annotate, for the corpus's own check ----

  private static final ExtensionRegistry EXTENSIONS = ExtensionRegistry.newInstance();
  private static final Pattern STEP =
      Pattern.compile("\\.?([a-z_0-9]+)|\\[(\\d+)\\]|\\[\"((?:[^\"\\\\]|\\\\.)*)\"\\]");

  static {
    Validate.registerAllExtensions(EXTENSIONS);
  }

  /**
   * The PGV rules ({@code kind.rule}) annotated where {@code path} ends in {@code m}: on the
   * field, its items (path ends in an index), its map keys or values (ends in a key), or the
   * oneof's {@code required} (ends in a oneof's name). Walks into Anys as the path does.
   */
  static Set<String> annotatedRules(Message m, String path) throws InvalidProtocolBufferException {
    Object cur = m;
    FieldDescriptor field = null;
    char ending = 'f';
    Matcher s = STEP.matcher(path);
    int at = 0;
    while (at < path.length()) {
      assertThat(s.find(at) && s.start() == at).as("a step of %s at %d", path, at).isTrue();
      at = s.end();
      if (s.group(1) != null) {
        Message msg = unpacked((Message) cur);
        Descriptor d = msg.getDescriptorForType();
        field = d.findFieldByName(s.group(1));
        if (field == null) {
          OneofDescriptor o = d.getOneofs().stream()
              .filter(x -> x.getName().equals(s.group(1))).findFirst().orElse(null);
          assertThat(o).as("%s in %s", s.group(1), d.getFullName()).isNotNull();
          assertThat(at).as("a oneof ends the path").isEqualTo(path.length());
          boolean required = OneofOptions.parseFrom(o.getOptions().toByteString(), EXTENSIONS)
              .getExtension(Validate.required);
          return required ? Set.of("oneof.required") : Set.of();
        }
        cur = msg.getField(field);
        ending = 'f';
      } else if (s.group(2) != null) {
        cur = ((List<?>) cur).get(Integer.parseInt(s.group(2)));
        ending = 'i';
      } else {
        String key = s.group(3);
        Message entry = ((List<?>) cur).stream().map(Message.class::cast)
            .filter(e -> String.valueOf(e.getField(e.getDescriptorForType()
                .findFieldByName("key"))).equals(key))
            .findFirst().orElseThrow(() -> new AssertionError("no key " + key + " in " + path));
        cur = entry.getField(entry.getDescriptorForType().findFieldByName("value"));
        ending = 'k';
      }
    }
    assertThat(field).as("a field in %s", path).isNotNull();
    FieldRules fr = FieldOptions.parseFrom(field.getOptions().toByteString(), EXTENSIONS)
        .getExtension(Validate.rules);
    List<Message> where = switch (ending) {
      case 'i' -> List.of(fr.getRepeated().getItems());
      case 'k' -> List.of(fr.getMap().getKeys(), fr.getMap().getValues());
      default -> List.of(fr);
    };
    Set<String> out = new TreeSet<>();
    // An item that repeats an earlier one is where repeated.unique points; a bad key is map.keys.
    if (ending == 'i' && fr.getRepeated().getUnique()) {
      out.add("repeated.unique");
    }
    if (ending == 'k' && fr.getMap().hasKeys()) {
      out.add("map.keys");
    }
    for (Message rulesAt : where) {
      for (Map.Entry<FieldDescriptor, Object> kind : rulesAt.getAllFields().entrySet()) {
        if (kind.getValue() instanceof Message sub) {
          for (FieldDescriptor r : sub.getAllFields().keySet()) {
            out.add(kind.getKey().getName() + "." + r.getName());
          }
        }
      }
    }
    return out;
  }

  /** An Any's content, parsed with the type its URL names; any other message as it is. */
  private static Message unpacked(Message m) throws InvalidProtocolBufferException {
    if (!m.getDescriptorForType().getFullName().equals("google.protobuf.Any")) {
      return m;
    }
    Descriptor d = m.getDescriptorForType();
    String url = (String) m.getField(d.findFieldByName("type_url"));
    Descriptor type = TYPES.find(url.substring(url.lastIndexOf('/') + 1));
    assertThat(type).as("the type of %s", url).isNotNull();
    return DynamicMessage.parseFrom(type,
        (com.google.protobuf.ByteString) m.getField(d.findFieldByName("value")));
  }
}
