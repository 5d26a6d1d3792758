package dev.meridian.internal.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A config that cannot be read is rejected in a user's words: a file that is not text says so at
 * its first byte that is not, an indentation mistake names the line and where it and the lines
 * before it stand, a misspelt {@code @type} inside a resource gets "did you mean".
 */
class ConfigErrorsInWordsTest {
  @TempDir Path dir;

  /** The problems of loading {@code file}, one per line. */
  private static List<String> problems(Path file) {
    try {
      new ConfigLoader().load(file);
    } catch (ConfigException e) {
      return e.problems();
    }
    throw new AssertionError(file + " loaded");
  }

  private Path write(String name, String text) throws Exception {
    return Files.writeString(dir.resolve(name), text);
  }

  /** The first bytes of a real PNG file: signature, then its IHDR chunk. */
  static final byte[] PNG = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13,
      'I', 'H', 'D', 'R', 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1f, 0x15, (byte) 0xc4,
      (byte) 0x89};

  @Test
  void anImageGivenAsTheConfigIsNotTextAtItsFirstByte() throws Exception {
    Path png = Files.write(dir.resolve("config.yaml"), PNG);
    assertThat(problems(png)).containsExactly(png + ":1:1: not UTF-8 text: byte 0x89 at offset 0"
        + " is not valid UTF-8 (it looks like a PNG image); a config file is YAML or JSON text in"
        + " UTF-8: is this the file you meant?");
  }

  @Test
  void aFileSavedAsUtf16IsToldToBeSavedAsUtf8() throws Exception {
    byte[] text = "resources: []\n".getBytes(StandardCharsets.UTF_16LE);
    byte[] withBom = new byte[text.length + 2];
    withBom[0] = (byte) 0xFF;
    withBom[1] = (byte) 0xFE;
    System.arraycopy(text, 0, withBom, 2, text.length);
    Path f = Files.write(dir.resolve("c.yaml"), withBom);
    assertThat(problems(f)).singleElement().asString()
        .startsWith(f + ":1:1: not UTF-8 text: byte 0xFF at offset 0 is not valid UTF-8")
        .contains("it starts with a UTF-16 byte order mark: save it as UTF-8");
  }

  @Test
  void aBadByteInsideTextIsNamedAtItsOffsetLineAndColumn() throws Exception {
    byte[] head = "resources: []\n# caf".getBytes(StandardCharsets.UTF_8);
    byte[] bytes = new byte[head.length + 2];
    System.arraycopy(head, 0, bytes, 0, head.length);
    bytes[head.length] = (byte) 0xE9; // Latin-1 é
    bytes[head.length + 1] = '\n';
    Path f = Files.write(dir.resolve("c.yaml"), bytes);
    assertThat(problems(f)).singleElement().asString()
        .startsWith(f + ":2:6: not UTF-8 text: byte 0xE9 at offset 19 is not valid UTF-8;");
  }

  @Test
  void aNulByteIsNotText() throws Exception {
    Path f = Files.write(dir.resolve("c.yaml"), "resources: []\u0000\n".getBytes(StandardCharsets.UTF_8));
    assertThat(problems(f)).singleElement().asString()
        .startsWith(f + ":1:14: not UTF-8 text: byte 0x00 at offset 13 is a NUL, which text never "
            + "holds;");
  }

  @Test
  void aKeyIndentedFurtherThanTheKeysBeforeItIsSaidSo() throws Exception {
    Path f = write("c.yaml", """
        resources:
          - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
            name: backend
            type: STATIC
            connect_timeout: "1s"
              lb_policy: ROUND_ROBIN
        """);
    assertThat(problems(f)).containsExactly(f + ":6:7: invalid YAML: line 6: this key is indented"
        + " more than the keys before it: `lb_policy` is at column 7, `connect_timeout` (line 5)"
        + " at column 5; line them up");
  }

  /** After a plain value the parser's words differ ("mapping values are not allowed here"). */
  @Test
  void aKeyIndentedFurtherAfterAPlainValueIsSaidTheSameWay() throws Exception {
    Path f = write("c.yaml", """
        resources:
          - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
            name: backend
             type: STATIC
        """);
    assertThat(problems(f)).containsExactly(f + ":4:6: invalid YAML: line 4: this key is indented"
        + " more than the keys before it: `type` is at column 6, `name` (line 3) at column 5;"
        + " line them up");
  }

  @Test
  void aKeyBetweenTwoLevelsNamesTheColumnsOfTheKeysAboveIt() throws Exception {
    Path f = write("c.yaml", """
        resources:
          - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
            name: backend
            load_assignment:
              cluster_name: backend
             type: STATIC
        """);
    assertThat(problems(f)).containsExactly(f + ":6:6: invalid YAML: line 6: this key is indented"
        + " less than the keys before it, but not as little as any mapping above it: `type` is at"
        + " column 6; the keys above it are at columns 7 (`cluster_name`, line 5), 5"
        + " (`load_assignment`, line 4) and 1 (`resources`, line 1); line it up with the keys of"
        + " its mapping");
  }

  @Test
  void aListItemOutOfLineWithTheItemsBeforeItIsSaidSo() throws Exception {
    Path f = write("c.yaml", """
        resources:
          - "@type": type.googleapis.com/envoy.config.listener.v3.Listener
            name: l
            filter_chains:
              - filters: []
             - filters: []
        """);
    assertThat(problems(f)).containsExactly(f + ":6:6: invalid YAML: line 6: this list item is"
        + " indented less than the items before it: it is at column 6, the item on line 5 at"
        + " column 7; line them up");
  }

  @Test
  void aTabInTheIndentationIsSaidSo() throws Exception {
    Path f = write("c.yaml", "resources:\n  - \"@type\": x\n\tname: y\n");
    assertThat(problems(f)).containsExactly(f + ":3:1: invalid YAML: line 3: a tab in the"
        + " indentation; YAML indents with spaces only");
  }

  @Test
  void aValueHoldingColonSpaceIsToldToBeQuoted() throws Exception {
    Path f = write("c.yaml", """
        resources:
          - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
            name: backend: v2
        """);
    assertThat(problems(f)).containsExactly(f + ":3:18: invalid YAML: line 3: a value that holds"
        + " ': ' must be quoted, e.g. `name: \"backend: v2\"`");
  }

  @Test
  void aMisspeltTypeInsideAResourceGetsDidYouMean() throws Exception {
    Path f = write("c.yaml", """
        resources:
          - "@type": type.googleapis.com/envoy.config.listener.v3.Listener
            name: http
            filter_chains:
              - filters:
                  - name: envoy.filters.network.http_connection_manager
                    typed_config:
                      "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConectionManager
                      stat_prefix: ingress
        """);
    assertThat(problems(f)).containsExactly(f + ":8:24: resources[0]"
        + " (type.googleapis.com/envoy.config.listener.v3.Listener 'http'):"
        + " filter_chains[0].filters[0].typed_config.@type: unknown type"
        + " `type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3"
        + ".HttpConectionManager`; did you mean"
        + " `type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3"
        + ".HttpConnectionManager`?");
  }

  @Test
  void aTypeNothingLikeAnyGetsNoGuess() throws Exception {
    Path f = write("c.yaml", """
        resources:
          - "@type": type.googleapis.com/envoy.config.listener.v3.Listener
            name: http
            filter_chains:
              - filters:
                  - name: f
                    typed_config: { "@type": type.googleapis.com/acme.Nothing }
        """);
    assertThat(problems(f)).singleElement().asString()
        .endsWith("unknown type `type.googleapis.com/acme.Nothing`");
  }

  @Test
  void aStrictJsonFileIsNotTextEitherWhenItIsAnImage() throws Exception {
    Path png = Files.write(dir.resolve("config.json"), PNG);
    assertThat(problems(png)).singleElement().asString()
        .startsWith(png + ":1:1: not UTF-8 text: byte 0x89 at offset 0");
  }

  @Test
  void aConfigWithValidUtf8BeyondAsciiStillLoads() throws Exception {
    Path f = write("c.yaml", """
        resources:
          # café, 東京
          - { "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster, name: "café" }
        """);
    assertThat(new ConfigLoader().load(f).resources()).isEqualTo(1);
  }

  @Test
  void theParserStillSpeaksForAMistakeNotKnownHere() {
    assertThatThrownBy(() -> YamlTree.read("a: [1, 2\n"))
        .isInstanceOf(ConfigNode.Invalid.class).hasMessageStartingWith("invalid YAML: ");
  }
}
