package dev.meridian.internal.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.internal.protocol.XdsResource;
import dev.meridian.xds.ResourceType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A YAML file read by its resources' text (issue 23) reads exactly as the whole file read by the
 * YAML reader: the same tree, value by value, position by position; and where the two could
 * disagree, the outline declines and the whole file is read.
 */
class YamlOutlineTest {
  @TempDir Path dir;

  private static final String CLUSTER = """
      "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
      name: %s
      type: EDS
      connect_timeout: 0.25s
      eds_cluster_config:
        eds_config: { ads: {}, resource_api_version: V3 }
      """;

  /** Files as people write them, and the corners of block YAML the cut must respect. */
  private static final List<String> AGREEING = List.of(
      // indented list, comments between and after elements, a group with its own list
      """
      # fleet config
      resources:
        - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster   # first
          name: a
          type: STATIC

        # between elements
        - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
          name: b
      groups:
        - name: canary
          match: { node_id: "canary-*" }
          resources:
            - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
              name: a
        - name: other
          match:
            node_cluster: "x*"
          resources:
          - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
            name: c
      """,
      // compact list at the key's own indentation, no final newline
      "resources:\n- \"@type\": type.googleapis.com/envoy.config.cluster.v3.Cluster\n  name: a\n"
          + "- {\"@type\": type.googleapis.com/envoy.config.cluster.v3.Cluster, name: b}",
      // block scalars, keep chomping with trailing empty lines, multi-line flow values
      """
      resources:
        - "@type": type.googleapis.com/envoy.service.runtime.v3.Runtime
          name: rt
          layer:
            note: |+
              line one
               line two

            other: >-
              folded
              text
        - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
          name: "quoted
            across lines"
          metadata: { filter_metadata: { x: { a: 1,
              b: [1, 2] } } }
      secret_access:
        - secrets: "s-*"
          identities: ["spiffe://x/*"]
      """,
      // a leading document marker, CRLF line breaks
      "---\r\nresources:\r\n  - \"@type\": type.googleapis.com/envoy.config.cluster.v3.Cluster\r\n"
          + "    name: a\r\n  - \"@type\": type.googleapis.com/envoy.config.cluster.v3.Cluster\r\n"
          + "    name: b\r\n",
      // first key of a group on the dash line, an empty element, a nested list in an element
      """
      groups:
        - resources:
            - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
              name: a
              health_checks:
                - timeout: 1s
                - interval: 2s
            -
            - ~
          name: g
          match: { node_id: "*" }
      """,
      // explicit tags and a bad one stay what the YAML reader makes of them
      """
      resources:
        - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
          name: !!str 0777
          alt_stat_name: !custom x
      """);

  /** Texts the outline must leave to the whole-file reader (null), since a cut could misread. */
  private static final List<String> DECLINED = List.of(
      // an alias reaches into another element
      """
      resources:
        - &base { "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster, name: a }
        - *base
      """,
      // a second document
      "resources:\n  - {name: a}\n---\nresources: []\n",
      // a directive
      "%YAML 1.2\n---\nresources:\n  - {name: a}\n",
      // a tab before content
      "resources:\n\t- {name: a}\n",
      // an element that does not read alone (a quoted scalar running into the next element)
      "resources:\n  - name: \"a\n  - b\"\n",
      // a resources key inside a block scalar: the cut would not be confirmed by the structure
      "secret_access:\n  - secrets: |\n      resources:\n        - x\n    identities: [a]\n",
      // nothing to cut
      "resources: []\n");

  @Test
  void outlineReadsEveryValueAndPositionAsTheWholeFileReaderDoes() throws Exception {
    for (String text : AGREEING) {
      ConfigNode outlined = YamlOutline.read(text, key -> false);
      assertThat(outlined).as("outlined: %s", text).isNotNull();
      assertThat(render(outlined)).as(text).isEqualTo(render(YamlTree.read(text)));
    }
  }

  @Test
  void outlineDeclinesWhereACutCouldMisreadTheFile() {
    for (String text : DECLINED) {
      assertThat(YamlOutline.read(text, key -> false)).as(text).isNull();
    }
  }

  @Test
  void randomizedBlockFilesReadTheSameBothWays() throws Exception {
    long seed = 23;
    Random random = new Random(seed);
    int compared = 0;
    for (int round = 0; round < 200; round++) {
      String text = randomFile(random);
      ConfigNode outlined = YamlOutline.read(text, key -> false);
      String whole;
      try {
        whole = render(YamlTree.read(text));
      } catch (ConfigNode.Invalid e) {
        assertThat(outlined).as("seed %s round %s: invalid as a whole, so declined:\n%s", seed,
            round, text).isNull();
        continue;
      }
      if (outlined != null) {
        compared++;
        assertThat(render(outlined)).as("seed %s round %s:\n%s", seed, round, text)
            .isEqualTo(whole);
      }
    }
    assertThat(compared).as("rounds read both ways").isGreaterThan(50);
  }

  @Test
  void anElementAlreadyBuiltIsNotParsedAgain() {
    // The second element is not YAML by itself; known, it is never read, so the outline stands.
    String text = "resources:\n  - {name: a}\n  - {name: [b}\n";
    assertThat(YamlOutline.read(text, key -> key.contains("[b}"))).isNotNull();
    assertThat(YamlOutline.read(text, key -> false)).isNull();
  }

  @Test
  void aOneResourceEditOfABigYamlFileBuildsOneResourceAndKeepsTheRest() throws Exception {
    Path file = dir.resolve("fleet.yaml");
    Files.writeString(file, fleet(500, -1));
    ConfigLoader loader = new ConfigLoader();
    ConfigLoader.Loaded first = loader.load(file);
    long built = loader.resourcesSerialized();
    Files.writeString(file, fleet(500, 250));
    ConfigLoader.Loaded second = loader.load(file);
    assertThat(loader.resourcesSerialized() - built).isEqualTo(1);
    var before = first.config().defaults().get(ResourceType.CLUSTER).resources();
    var after = second.config().defaults().get(ResourceType.CLUSTER).resources();
    assertThat(after).hasSize(500);
    for (String name : before.keySet()) {
      XdsResource was = before.get(name);
      if (name.equals("c-250")) {
        assertThat(after.get(name).version()).isNotEqualTo(was.version());
      } else {
        assertThat(after.get(name)).isSameAs(was);
      }
    }
  }

  @Test
  void problemsInACutFileNameTheirLinesAsInTheFile() throws Exception {
    Path file = dir.resolve("c.yaml");
    String text = fleet(3, -1)
        + "  - \"@type\": type.googleapis.com/envoy.config.cluster.v3.Cluster\n    name: c-1\n"
        + "  - \"@type\": type.googleapis.com/envoy.config.cluster.v3.Cluster\n    name: c-9\n"
        + "    conect_timeout: 1s\n";
    Files.writeString(file, text);
    ConfigLoader loader = new ConfigLoader();
    String outlined = problems(loader, file);
    // The same file through the whole-file reader: a file the outline declines (an alias).
    Files.writeString(file, text.replace("name: c-0", "name: &n c-0"));
    String whole = problems(new ConfigLoader(), file);
    assertThat(outlined).contains("c.yaml:24:5:", "unknown field `conect_timeout`",
        "duplicate name within the default resources (first defined at " + file + ":8)");
    assertThat(outlined).isEqualTo(whole);
  }

  @Test
  void yamlNestedThousandsOfLevelsDeepIsAProblemOfTheConfigNotACrash() throws Exception {
    // The YAML parser recurses per level with no limit of its own (issue 25: hostile input).
    String deep = "resources:\n  - name: x\n    a: " + "[".repeat(50_000) + "]".repeat(50_000)
        + "\n";
    Path file = dir.resolve("deep.yaml");
    Files.writeString(file, deep);
    assertThat(problems(new ConfigLoader(), file)).contains("deep.yaml:",
        "YAML nested too deeply");
  }

  private static String problems(ConfigLoader loader, Path file) {
    try {
      loader.load(file);
      throw new AssertionError("loaded");
    } catch (ConfigException e) {
      return e.getMessage();
    }
  }

  /** A file of {@code n} clusters; cluster {@code changed} gets another timeout. */
  static String fleet(int n, int changed) {
    StringBuilder sb = new StringBuilder("resources:\n");
    for (int i = 0; i < n; i++) {
      String c = CLUSTER.formatted("c-" + i).replace("0.25s", i == changed ? "0.5s" : "0.25s");
      sb.append("  - ").append(c.replace("\n", "\n    ").stripTrailing()).append('\n');
    }
    return sb.toString();
  }

  private static String randomFile(Random r) {
    List<String> pieces = List.of("name: x", "a: |\n  text\n\n  more", "b: |+\n  kept\n\n",
        "c: [1,\n  2]", "d: \"q\n  r\"", "e: {f: g}", "# comment", "", "h:\n  - i\n  - j",
        "k: 'single''s'", "l: >-\n  folded\n  on", "m: ~", "- n", "o: !!str 5", "p: &a 1",
        "q:\n- r\n- s", "\t# tab", "t: \"u\"  # trailing");
    StringBuilder sb = new StringBuilder();
    sb.append(r.nextBoolean() ? "resources:\n" : "groups:\n  - name: g\n    match: {node_id: x}\n"
        + "    resources:\n");
    String indent = sb.toString().startsWith("groups") ? "      " : r.nextBoolean() ? "  " : "";
    int elements = 1 + r.nextInt(4);
    for (int e = 0; e < elements; e++) {
      List<String> lines = new ArrayList<>();
      int keys = r.nextInt(4);
      for (int k = 0; k < keys; k++) {
        lines.add(pieces.get(r.nextInt(pieces.size())));
      }
      String body = String.join("\n", lines).replace("\n", "\n" + indent + "  ");
      sb.append(indent).append("-").append(body.isEmpty() ? "" : " " + body).append('\n');
      if (r.nextInt(5) == 0) {
        sb.append(r.nextBoolean() ? "\n" : "# between\n");
      }
    }
    if (r.nextBoolean()) {
      sb.append("secret_access: []\n");
    }
    return r.nextInt(6) == 0 ? sb.toString().stripTrailing() : sb.toString();
  }

  /** Every value with its position and how it reads: equal renders are equal trees. */
  static String render(ConfigNode n) {
    StringBuilder sb = new StringBuilder();
    render(n, sb, "");
    return sb.toString();
  }

  private static void render(ConfigNode n, StringBuilder sb, String indent) {
    if (n == null) {
      sb.append(indent).append("(no document)\n");
      return;
    }
    ConfigNode t = n.tree();
    sb.append(indent).append(t.kind()).append(' ').append(t.line()).append(':')
        .append(t.column());
    if (t.kind() == ConfigNode.Kind.SCALAR || t.kind() == ConfigNode.Kind.NULL) {
      sb.append(" [").append(t.scalar()).append("] plain=").append(t.plain()).append(" core=")
          .append(t.core());
    }
    if (t.unsupported() != null) {
      sb.append(" unsupported=").append(t.unsupported());
    }
    sb.append('\n');
    for (ConfigNode.Entry e : t.entries()) {
      sb.append(indent).append("key ").append(e.key()).append(' ').append(e.keyLine())
          .append(':').append(e.keyColumn()).append('\n');
      render(e.value(), sb, indent + "  ");
    }
    for (ConfigNode item : t.items()) {
      render(item, sb, indent + "  ");
    }
  }
}
