package dev.meridian.internal.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.meridian.xds.ResourceType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 18 §3: a {@code .json} file is strict JSON (RFC 8259). What is not (a trailing comma, a
 * comment, an unquoted key...) is an error with its line and column, never a silent second reading
 * as YAML; the config it would have replaced keeps being served.
 */
class StrictJsonTest {
  @TempDir Path dir;

  static Stream<Arguments> notJson() {
    return Stream.of(
        Arguments.of("a trailing comma in an object", """
            {"resources": [
              {"@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", "name": "a",}
            ]}
            """, "2:79", "a trailing comma is not allowed in JSON"),
        Arguments.of("a trailing comma in an array", """
            {"resources": [
              {"@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", "name": "a"},
            ]}
            """, "2:80", "a trailing comma is not allowed in JSON"),
        Arguments.of("a # comment", """
            {
              # the clusters
              "resources": []
            }
            """, "2:3", "comments are not allowed in JSON"),
        Arguments.of("a // comment after a value", """
            {"resources": [] // none yet
            }
            """, "1:18", "comments are not allowed in JSON"),
        Arguments.of("an unquoted key", """
            {"resources": [
              {"@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", name: "a"}
            ]}
            """, "2:68", "expected a key in double quotes, found 'n'"),
        Arguments.of("a single-quoted string", """
            {"resources": [{"@type": 'x'}]}
            """, "1:26", "strings must be in double quotes"),
        Arguments.of("an unquoted value", """
            {"resources": [{"@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster",
              "name": a}]}
            """, "2:11", "expected a value"),
        Arguments.of("a leading zero", """
            {"resources": [{"port": 0777}]}
            """, "1:25", "a number must not have leading zeros"),
        Arguments.of("a hex number", """
            {"resources": [{"port": 0x1F}]}
            """, "1:26", "expected ',' or '}', found 'x'"),
        Arguments.of("a missing colon", """
            {"resources" []}
            """, "1:14", "expected ':' after the key, found '['"),
        Arguments.of("a raw line break in a string", """
            {"resources": [{"name": "a
            b"}]}
            """, "1:27", "unterminated string"),
        Arguments.of("an invalid escape", """
            {"resources": [{"name": "a\\x"}]}
            """, "1:27", "invalid escape \\x"),
        Arguments.of("a missing closing brace", """
            {"resources": [
            """, "2:1", "expected a value, found the end of the file"),
        Arguments.of("text after the value", """
            {"resources": []}
            {"groups": []}
            """, "2:1", "expected the end of the file after the top-level value"),
        Arguments.of("a capitalized literal", """
            {"resources": [{"respect_dns_ttl": True}]}
            """, "1:36", "expected a value"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("notJson")
  void aJsonFileThatIsNotStrictJsonIsAnErrorAtItsLineAndColumn(String what, String text,
      String at, String message) throws Exception {
    Path p = dir.resolve("config.json");
    Files.writeString(p, text);
    assertThatThrownBy(() -> new ConfigLoader().load(p)).isInstanceOf(ConfigException.class)
        .hasMessageStartingWith(p + ":" + at + ": invalid JSON: ")
        .hasMessageContaining(message);
  }

  @Test
  void aBadJsonEditKeepsTheLastGoodConfig() throws Exception {
    Path p = dir.resolve("config.json");
    Files.writeString(p, """
        {"resources": [{"@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", "name": "a"}]}
        """);
    ConfigLoader loader = new ConfigLoader();
    Object a = loader.load(p).config().defaults().get(ResourceType.CLUSTER).get("a");
    Files.writeString(p, """
        {"resources": [{"@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", "name": "a"},]}
        """);
    assertThatThrownBy(() -> loader.load(p)).hasMessageContaining("trailing comma");
    // The loader's state is the last good load's: an unchanged resource is still the same one.
    Files.writeString(p, """
        {"resources": [{"@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", "name": "a"}]}
        """);
    assertThat(loader.load(p).config().defaults().get(ResourceType.CLUSTER).get("a")).isSameAs(a);
  }

  @Test
  void yamlFilesMayStillUseJsonStyleFlowSyntax() throws Exception {
    // YAML allows what strict JSON does not: comments, unquoted keys, a trailing comma in a flow.
    Path p = dir.resolve("config.yaml");
    Files.writeString(p, """
        {"resources": [   # the clusters
          {"@type": type.googleapis.com/envoy.config.cluster.v3.Cluster, name: a,},
        ]}
        """);
    assertThat(new ConfigLoader().load(p).resources()).isEqualTo(1);
  }

  @Test
  void anEmptyJsonFileContributesNothing() throws Exception {
    Path p = dir.resolve("config.json");
    Files.writeString(p, "  \n");
    assertThat(new ConfigLoader().load(p).resources()).isZero();
  }
}
