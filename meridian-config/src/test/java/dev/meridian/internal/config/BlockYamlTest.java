package dev.meridian.internal.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The fast reader of config elements (issue 23) reads what it reads exactly as the YAML reader
 * does, value by value and position by position, and declines the rest; it does read the shapes
 * config files are made of, or it would be no faster.
 */
class BlockYamlTest {
  /** What config files hold: the fast reader must read these itself. */
  private static final List<String> READ = List.of(
      """
        - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
          name: cluster-0
          type: EDS
          connect_timeout: 1s   # a comment
          lb_policy: ROUND_ROBIN
          eds_cluster_config:
            eds_config:
              ads: {}
              resource_api_version: V3
      """,
      """
        - "@type": type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment
          cluster_name: cluster-0

          endpoints:
            # a comment line
            - lb_endpoints:
                - endpoint: { address: { socket_address: { address: 10.0.0.1, port_value: 10000 } } }
                - endpoint:
                    address:
                      socket_address:
                        address: "10.0.0.2"
                        port_value: 10000
              locality: {region: 'us-east-1', zone: "a # not a comment"}
      """,
      """
      - "@type": type.googleapis.com/envoy.config.route.v3.RouteConfiguration
        name: local_routes
        virtual_hosts:
        - name: all
          domains: ["*", example.com]
          routes:
          - match: { prefix: "/" }
            route: { cluster: greeter-v1, timeout: 0.5s }
        metadata:
          filter_metadata:
            x: { n: 1e3, b: true, z: ~, s: yes, o: 0x1F, f: .inf, e: null, q: 'Its' }
      """,
      "  - {\"@type\": type.googleapis.com/envoy.config.cluster.v3.Cluster, name: b}\n",
      "  - name: x\n    n: -5\n    url: http://a:80/p#frag\n    k-v: a:b\n",
      "  - key: value\n  - other: 1\n  - [a, b]\n  - plain scalar\n");

  /** Corners it must leave to the YAML reader, or read exactly as it does. */
  private static final List<String> CORNERS = List.of(
      "  - a: |\n      text\n", "  - a: >-\n      folded\n", "  - a: \"esc\\n\"\n",
      "  - a: multi\n      line\n", "  - a: \"multi\n      line\"\n", "  - a:\n    b: 1\n",
      "  - a:\n  - b\n", "  - &x a\n", "  - *x\n", "  - !!str 5\n", "  - ? a\n    : b\n",
      "  - a: 1\n    a: 2\n", "  - {a: 1, a: 2}\n", "  - [a, b, ]\n", "  - {a}\n",
      "  - a: b: c\n", "  - a: - b\n", "  -\n    a: 1\n", "  - \"a\": 1\n", "  - 'k': v\n",
      "  - a:    \n", "  - a: 'x' y\n", "  - a: [1, [2, {b: c}]]\n", "  - a: {b: [1, 2], c: d}\n",
      "  - - a\n    - b\n", "  - a: b #c\n", "  - a: b#c\n", "  - a: -1\n", "  - a: -\n",
      "  - a: :x\n", "  - a: ?x\n", "  - a: x:\n", "  - a\t: b\n", "  - a: é ü\n",
      "  - a: 😀\n", "  - a: ${HOME}\n", "  - <<: 1\n", "  - a: 1\n  b: 2\n",
      "  - a: 1\n      b: 2\n", "  - a: [1,\n      2]\n", "  - a: '#'\n", "  - a: \"x\" # c\n",
      "  - a: {b: \"x, y\", c: 'p: q'}\n", "  - a: {\"b\":1}\n", "  - a: [\"x\" , 'y' ]\n",
      "  - a: null\n    b: Null\n    c: NULL\n    d: True\n    e: FALSE\n    f: +1\n",
      // in flow, ':' is a value indicator and '-' or '?' before ',' or ']' no scalar
      "  - h: [:authority, :path]\n", "  - h: [-]\n", "  - h: [-, x]\n", "  - h: [?]\n",
      "  - h: {a: -, b: 1}\n", "  - h: {a: :b}\n", "  - h: [-1, -x]\n",
      "  - " + "k".repeat(1100) + ": v\n", "  - {" + "k".repeat(1100) + ": v}\n");

  @Test
  void theShapesOfConfigFilesAreReadAsTheYamlReaderReadsThem() {
    for (String text : READ) {
      List<ConfigNode> fast = BlockYaml.readElements(text, 7, count(text));
      assertThat(fast).as("read by the fast reader:\n%s", text).isNotNull();
      assertThat(render(fast)).as(text).isEqualTo(render(YamlTree.readElements(text, 7,
          count(text))));
    }
  }

  @Test
  void cornersAreReadExactlyOrDeclined() {
    int read = 0;
    for (String text : CORNERS) {
      List<ConfigNode> fast = BlockYaml.readElements(text, 0, 1);
      if (fast != null) {
        read++;
        List<ConfigNode> yaml = YamlTree.readElements(text, 0, 1);
        assertThat(yaml).as("the YAML reader reads it too:\n%s", text).isNotNull();
        assertThat(render(fast)).as(text).isEqualTo(render(yaml));
      }
    }
    assertThat(read).as("corners read by the fast reader").isGreaterThan(10);
  }

  @Test
  void randomElementsAreReadExactlyOrDeclined() {
    long seed = 2326;
    Random r = new Random(seed);
    List<String> keys = List.of("a", "b_c", "\"@type\"", "'q'", "d-e", "f.g", "h i");
    List<String> values = List.of("x", "1", "-2.5e3", "true", "~", "null", "''", "\"\"",
        "\"a: b\"", "'c # d'", "{}", "[]", "{a: 1}", "[x, y]", "{a: [1, {b: c}]}", "yes",
        "0777", "http://h:1/p", "a #c", "a#b", "\"q\" #c", "[a, {b: c, d: [e]}]", "- x", "a: b",
        "{a: 1, a: 2}", "|", ">", "&n x", "*n", "!t x");
    int read = 0;
    for (int round = 0; round < 400; round++) {
      StringBuilder sb = new StringBuilder();
      int indent = r.nextInt(3) * 2;
      int items = 1 + r.nextInt(3);
      for (int i = 0; i < items; i++) {
        element(r, sb, indent, 0, keys, values);
      }
      String text = sb.toString();
      List<ConfigNode> fast = BlockYaml.readElements(text, 3, items);
      if (fast != null) {
        read++;
        List<ConfigNode> yaml = YamlTree.readElements(text, 3, items);
        assertThat(yaml).as("seed %s round %s: the YAML reader reads it too:\n%s", seed, round,
            text).isNotNull();
        assertThat(render(fast)).as("seed %s round %s:\n%s", seed, round, text)
            .isEqualTo(render(yaml));
      }
    }
    assertThat(read).as("random elements read by the fast reader").isGreaterThan(100);
  }

  @Test
  void aFleetFileIsReadByTheFastReaderThroughout() throws Exception {
    String text = YamlOutlineTest.fleet(50, -1);
    ConfigNode outlined = YamlOutline.read(text, key -> false);
    assertThat(YamlOutlineTest.render(outlined)).isEqualTo(YamlOutlineTest.render(
        YamlTree.read(text)));
    String body = text.substring(text.indexOf('\n') + 1);
    assertThat(BlockYaml.readElements(body, 1, 50)).isNotNull();
    Path quickstart = Path.of("..", "examples", "quickstart.yaml");
    String qs = Files.readString(quickstart);
    assertThat(YamlOutlineTest.render(YamlOutline.read(qs, key -> false)))
        .isEqualTo(YamlOutlineTest.render(YamlTree.read(qs)));
  }

  private static void element(Random r, StringBuilder sb, int indent, int depth,
      List<String> keys, List<String> values) {
    String pad = " ".repeat(indent);
    sb.append(pad).append("- ");
    int n = 1 + r.nextInt(3);
    if (r.nextInt(4) == 0) {
      sb.append(values.get(r.nextInt(values.size()))).append('\n');
      return;
    }
    for (int k = 0; k < n; k++) {
      if (k > 0) {
        sb.append(pad).append("  ");
      }
      sb.append(keys.get(r.nextInt(keys.size()))).append(':');
      int kind = depth > 2 ? 0 : r.nextInt(5);
      if (kind == 3) {
        sb.append('\n');
        int sub = 1 + r.nextInt(2);
        for (int i = 0; i < sub; i++) {
          element(r, sb, indent + 2 + (r.nextBoolean() ? 2 : 0) * 0, depth + 1, keys, values);
        }
      } else if (kind == 4) {
        sb.append('\n').append(pad).append("    ").append(keys.get(r.nextInt(keys.size())))
            .append(": ").append(values.get(r.nextInt(values.size()))).append('\n');
      } else {
        sb.append(' ').append(values.get(r.nextInt(values.size()))).append('\n');
      }
      if (r.nextInt(8) == 0) {
        sb.append(r.nextBoolean() ? "\n" : pad + "# c\n");
      }
    }
  }

  private static int count(String text) {
    int indent = text.indexOf('-');
    int n = 0;
    for (String line : text.split("\n")) {
      if (line.length() > indent && line.startsWith("- ", indent)
          && line.substring(0, indent).isBlank()) {
        n++;
      }
    }
    return n;
  }

  private static String render(List<ConfigNode> nodes) {
    List<String> out = new ArrayList<>();
    for (ConfigNode n : nodes) {
      out.add(YamlOutlineTest.render(n));
    }
    return String.join("--\n", out);
  }
}
