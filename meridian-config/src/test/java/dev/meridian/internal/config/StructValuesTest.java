package dev.meridian.internal.config;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ListValue;
import com.google.protobuf.NullValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.service.runtime.v3.Runtime;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 18 §3: google.protobuf.Struct / Value / ListValue have no field type to go by, so a YAML
 * plain scalar there is what YAML 1.2's core schema makes of it (numbers stay numbers, {@code yes}
 * is a string), and a JSON value is its JSON type.
 */
class StructValuesTest {
  @TempDir Path dir;

  @Test
  void yamlScalarsInAStructFollowTheYaml12CoreSchema() throws Exception {
    Path p = dir.resolve("rt.yaml");
    Files.writeString(p, """
        resources:
          - "@type": type.googleapis.com/envoy.service.runtime.v3.Runtime
            name: rt
            layer:
              int: 42
              negative: -7
              exponent: 1e3
              fraction: 0.5
              leading_zero: 0777
              hex: 0x1F
              octal: 0o17
              inf: .inf
              minus_inf: -.Inf
              nan: .NaN
              bool: true
              capitalized_bool: False
              yes: yes
              on: on
              tilde: ~
              null_word: null
              empty:
              quoted_number: "42"
              quoted_bool: 'true'
              date: 2026-01-01
              time: 12:30
              underscore: 1_000
              list: [1, two, ~, { k: v }]
              nested: { a: { b: 2 } }
        """);
    Struct layer = runtime(p).getLayer();
    assertThat(layer.getFieldsMap()).containsExactlyInAnyOrderEntriesOf(Map.ofEntries(
        Map.entry("int", num(42)),
        Map.entry("negative", num(-7)),
        Map.entry("exponent", num(1000)),
        Map.entry("fraction", num(0.5)),
        Map.entry("leading_zero", num(777)), // YAML 1.2: decimal (octal is 0o777)
        Map.entry("hex", num(31)),
        Map.entry("octal", num(15)),
        Map.entry("inf", num(Double.POSITIVE_INFINITY)),
        Map.entry("minus_inf", num(Double.NEGATIVE_INFINITY)),
        Map.entry("nan", num(Double.NaN)),
        Map.entry("bool", Value.newBuilder().setBoolValue(true).build()),
        Map.entry("capitalized_bool", Value.newBuilder().setBoolValue(false).build()),
        Map.entry("yes", str("yes")),
        Map.entry("on", str("on")),
        Map.entry("tilde", nul()),
        Map.entry("null_word", nul()),
        Map.entry("empty", nul()),
        Map.entry("quoted_number", str("42")),
        Map.entry("quoted_bool", str("true")),
        Map.entry("date", str("2026-01-01")),
        Map.entry("time", str("12:30")),
        Map.entry("underscore", str("1_000")),
        Map.entry("list", Value.newBuilder().setListValue(ListValue.newBuilder()
            .addValues(num(1)).addValues(str("two")).addValues(nul())
            .addValues(Value.newBuilder().setStructValue(Struct.newBuilder()
                .putFields("k", str("v"))))).build()),
        Map.entry("nested", Value.newBuilder().setStructValue(Struct.newBuilder()
            .putFields("a", Value.newBuilder().setStructValue(Struct.newBuilder()
                .putFields("b", num(2))).build())).build())));
  }

  @Test
  void jsonValuesInAStructKeepTheirJsonTypes() throws Exception {
    Path p = dir.resolve("rt.json");
    Files.writeString(p, """
        {"resources": [{"@type": "type.googleapis.com/envoy.service.runtime.v3.Runtime",
          "name": "rt", "layer": {"n": 1e3, "s": "yes", "q": "42", "b": false, "z": null,
          "l": [0, "0777"]}}]}
        """);
    assertThat(runtime(p).getLayer().getFieldsMap()).containsExactlyInAnyOrderEntriesOf(Map.of(
        "n", num(1000), "s", str("yes"), "q", str("42"),
        "b", Value.newBuilder().setBoolValue(false).build(), "z", nul(),
        "l", Value.newBuilder().setListValue(ListValue.newBuilder().addValues(num(0))
            .addValues(str("0777"))).build()));
  }

  @Test
  void metadataStructsInAClusterReadTheSameWay() throws Exception {
    Path p = dir.resolve("c.yaml");
    Files.writeString(p, """
        resources:
          - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
            name: c
            alt_stat_name: 1e3
            metadata: { filter_metadata: { app: { version: 1e3, canary: yes } } }
        """);
    Cluster c = (Cluster) new ConfigLoader().load(p).config().defaults()
        .get(ResourceType.CLUSTER).get("c").message();
    // The same scalar is text in a string field and a number in a Struct.
    assertThat(c.getAltStatName()).isEqualTo("1e3");
    assertThat(c.getMetadata().getFilterMetadataOrThrow("app").getFieldsMap())
        .containsExactlyInAnyOrderEntriesOf(Map.of("version", num(1000), "canary", str("yes")));
  }

  private static Runtime runtime(Path p) throws ConfigException {
    return (Runtime) new ConfigLoader().load(p).config().defaults().get(ResourceType.RUNTIME)
        .get("rt").message();
  }

  private static Value num(double d) {
    return Value.newBuilder().setNumberValue(d).build();
  }

  private static Value str(String s) {
    return Value.newBuilder().setStringValue(s).build();
  }

  private static Value nul() {
    return Value.newBuilder().setNullValue(NullValue.NULL_VALUE).build();
  }
}
