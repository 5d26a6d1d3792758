package dev.meridian.internal.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.Message;
import com.google.protobuf.StringValue;
import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.ServedConfig;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.TypedExtensionConfig;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 18 §3 "YAML changes strings": a scalar is read by the type of the field it goes into. A
 * string field gets the text as written; a number, bool or enum field takes what proto3 JSON takes
 * there, and anything else is an error at the value's line and column. Each row runs in YAML and in
 * JSON, and both must read the same.
 */
class ScalarsByFieldTypeTest {
  @TempDir Path dir;

  /** Where a scalar goes: a resource in YAML and in JSON with {@code %s} for it, and a getter. */
  enum Field {
    STRING("Cluster.alt_stat_name", """
        resources:
          - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
            name: c
            alt_stat_name: %s
        """, """
        {"resources": [{"@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", "name": "c",
          "alt_stat_name": %s}]}
        """, m -> ((Cluster) m).getAltStatName()),
    STRING_IN_A_LIST("RouteConfiguration.virtual_hosts[0].domains[1]", """
        resources:
          - "@type": type.googleapis.com/envoy.config.route.v3.RouteConfiguration
            name: r
            virtual_hosts:
              - name: v
                domains:
                  - example.com
                  - %s
        """, """
        {"resources": [{"@type": "type.googleapis.com/envoy.config.route.v3.RouteConfiguration",
          "name": "r", "virtual_hosts": [{"name": "v", "domains": ["example.com", %s]}]}]}
        """, m -> ((RouteConfiguration) m).getVirtualHosts(0).getDomains(1)),
    STRING_VALUE_IN_AN_ANY("TypedExtensionConfig.typed_config (google.protobuf.StringValue)", """
        resources:
          - "@type": type.googleapis.com/envoy.config.core.v3.TypedExtensionConfig
            name: e
            typed_config:
              "@type": type.googleapis.com/google.protobuf.StringValue
              value: %s
        """, """
        {"resources": [{"@type": "type.googleapis.com/envoy.config.core.v3.TypedExtensionConfig",
          "name": "e", "typed_config": {"@type": "type.googleapis.com/google.protobuf.StringValue",
          "value": %s}}]}
        """, m -> unpackString((TypedExtensionConfig) m)),
    UINT32("ClusterLoadAssignment ... socket_address.port_value", """
        resources:
          - "@type": type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment
            cluster_name: c
            endpoints:
              - lb_endpoints:
                  - endpoint:
                      address:
                        socket_address:
                          address: 10.0.0.1
                          port_value: %s
        """, """
        {"resources": [{"@type": "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment",
          "cluster_name": "c", "endpoints": [{"lb_endpoints": [{"endpoint": {"address":
          {"socket_address": {"address": "10.0.0.1", "port_value": %s}}}}]}]}]}
        """, m -> ((ClusterLoadAssignment) m).getEndpoints(0).getLbEndpoints(0).getEndpoint()
            .getAddress().getSocketAddress().getPortValue()),
    UINT32_WRAPPER("Cluster.per_connection_buffer_limit_bytes", """
        resources:
          - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
            name: c
            per_connection_buffer_limit_bytes: %s
        """, """
        {"resources": [{"@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", "name": "c",
          "per_connection_buffer_limit_bytes": %s}]}
        """, m -> ((Cluster) m).hasPerConnectionBufferLimitBytes()
            ? ((Cluster) m).getPerConnectionBufferLimitBytes().getValue() : "unset"),
    INT64("Listener.socket_options[0].int_value", """
        resources:
          - "@type": type.googleapis.com/envoy.config.listener.v3.Listener
            name: l
            socket_options:
              - level: 1
                name: 2
                int_value: %s
        """, """
        {"resources": [{"@type": "type.googleapis.com/envoy.config.listener.v3.Listener", "name": "l",
          "socket_options": [{"level": 1, "name": 2, "int_value": %s}]}]}
        """, m -> ((Listener) m).getSocketOptions(0).getIntValue()),
    DOUBLE("Cluster.common_lb_config.healthy_panic_threshold.value", """
        resources:
          - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
            name: c
            common_lb_config:
              healthy_panic_threshold:
                value: %s
        """, """
        {"resources": [{"@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", "name": "c",
          "common_lb_config": {"healthy_panic_threshold": {"value": %s}}}]}
        """, m -> ((Cluster) m).getCommonLbConfig().getHealthyPanicThreshold().getValue()),
    BOOL("Cluster.respect_dns_ttl", """
        resources:
          - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
            name: c
            respect_dns_ttl: %s
        """, """
        {"resources": [{"@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", "name": "c",
          "respect_dns_ttl": %s}]}
        """, m -> ((Cluster) m).getRespectDnsTtl()),
    ENUM("Cluster.lb_policy", """
        resources:
          - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
            name: c
            lb_policy: %s
        """, """
        {"resources": [{"@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", "name": "c",
          "lb_policy": %s}]}
        """, m -> ((Cluster) m).getLbPolicy().name()),
    DURATION("Cluster.connect_timeout", """
        resources:
          - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
            name: c
            connect_timeout: %s
        """, """
        {"resources": [{"@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", "name": "c",
          "connect_timeout": %s}]}
        """, m -> ((Cluster) m).getConnectTimeout().getSeconds() + "s+"
            + ((Cluster) m).getConnectTimeout().getNanos() + "ns");

    final String what;
    final String yaml;
    final String json;
    final Function<Message, Object> get;

    Field(String what, String yaml, String json, Function<Message, Object> get) {
      this.what = what;
      this.yaml = yaml;
      this.json = json;
      this.get = get;
    }
  }

  enum Format { YAML, JSON }

  /** One row: a scalar as YAML writes it and as JSON writes it; null JSON: no JSON form. */
  record Row(Field field, String yaml, String json, Object expected) {
    @Override
    public String toString() {
      return field + " " + (yaml != null ? yaml : json)
          + (yaml != null && json != null && !json.equals(yaml) ? " (JSON " + json + ")" : "");
    }
  }

  /** The tricky scalars of the issue: YAML 1.1 would have made each one something else. */
  static final List<String> TRICKY = List.of("yes", "no", "on", "off", "y", "n", "~", "null",
      "Yes", "TRUE", "0777", "0x1F", "0o17", "1e3", "1_000", "+1", "-0", ".inf", "-.Inf", ".NaN",
      "2026-01-01", "2026-01-01T10:00:00Z", "12:30", "1:20:30", "0b101", "3.10");

  static Stream<Arguments> stringRows() {
    List<Arguments> rows = new ArrayList<>();
    for (Field f : List.of(Field.STRING, Field.STRING_IN_A_LIST, Field.STRING_VALUE_IN_AN_ANY)) {
      for (String s : TRICKY) {
        // YAML: plain, as written. JSON has no plain scalars: the same text as a JSON string.
        rows.add(Arguments.of(Format.YAML, new Row(f, s, null, s)));
        rows.add(Arguments.of(Format.JSON, new Row(f, null, "\"" + s + "\"", s)));
      }
      rows.add(Arguments.of(Format.YAML, new Row(f, "\"quoted\"", null, "quoted")));
      rows.add(Arguments.of(Format.YAML, new Row(f, "'yes'", null, "yes")));
      rows.add(Arguments.of(Format.YAML, new Row(f, "!!str 0777", null, "0777")));
      // A JSON number or literal into a string field: its text, as proto3 JSON reads it.
      rows.add(Arguments.of(Format.JSON, new Row(f, null, "1e3", "1e3")));
      rows.add(Arguments.of(Format.JSON, new Row(f, null, "10.50", "10.50")));
      rows.add(Arguments.of(Format.JSON, new Row(f, null, "true", "true")));
    }
    return rows.stream();
  }

  @ParameterizedTest(name = "{0}: {1}")
  @MethodSource("stringRows")
  void aScalarIntoAStringFieldIsItsTextAsWritten(Format format, Row row) throws Exception {
    assertThat(read(format, row)).isEqualTo(row.expected());
  }

  @Test
  void nullIntoAStringFieldIsNoValueInJsonButTextInYaml() throws Exception {
    // JSON: null means "not set" (proto3 JSON). YAML: the plain scalars `~` and `null` are text in
    // a string field (above); an empty value is no value.
    assertThat(read(Format.JSON, new Row(Field.STRING, null, "null", null))).isEqualTo("");
    assertThat(read(Format.YAML, new Row(Field.STRING, "", null, null))).isEqualTo("");
    assertThat(read(Format.YAML, new Row(Field.STRING_VALUE_IN_AN_ANY, "", null, null)))
        .isEqualTo("");
  }

  static Stream<Arguments> acceptedRows() {
    return Stream.of(
        new Row(Field.UINT32, "80", "80", 80),
        new Row(Field.UINT32, "\"80\"", "\"80\"", 80), // proto3 JSON takes numbers as strings
        new Row(Field.UINT32, "8e1", "8e1", 80), // and exponents, if the value is whole
        new Row(Field.UINT32, "80.0", "80.0", 80),
        new Row(Field.UINT32, "4294967295", "4294967295", -1),
        new Row(Field.UINT32, "~", "null", 0), // null: not set
        new Row(Field.UINT32_WRAPPER, "32768", "32768", 32768),
        new Row(Field.UINT32_WRAPPER, "null", "null", "unset"),
        new Row(Field.INT64, "-5", "-5", -5L),
        new Row(Field.INT64, "\"-5\"", "\"-5\"", -5L),
        new Row(Field.INT64, "1e3", "1e3", 1000L),
        new Row(Field.INT64, "9223372036854775807", "9223372036854775807", Long.MAX_VALUE),
        new Row(Field.DOUBLE, "50", "50", 50.0),
        new Row(Field.DOUBLE, "1e1", "1e1", 10.0),
        new Row(Field.DOUBLE, "0.5", "0.5", 0.5),
        new Row(Field.DOUBLE, "Infinity", "\"Infinity\"", Double.POSITIVE_INFINITY),
        new Row(Field.BOOL, "true", "true", true),
        new Row(Field.BOOL, "false", "false", false),
        new Row(Field.BOOL, "\"true\"", "\"true\"", true),
        new Row(Field.ENUM, "RING_HASH", "\"RING_HASH\"", "RING_HASH"),
        new Row(Field.ENUM, "\"MAGLEV\"", "\"MAGLEV\"", "MAGLEV"),
        new Row(Field.ENUM, "2", "2", "RING_HASH"), // proto3 JSON takes an enum's number
        new Row(Field.DURATION, "5s", "\"5s\"", "5s+0ns"),
        new Row(Field.DURATION, "0.25s", "\"0.25s\"", "0s+250000000ns"))
        .flatMap(r -> Stream.of(Arguments.of(Format.YAML, r), Arguments.of(Format.JSON, r)));
  }

  @ParameterizedTest(name = "{0}: {1}")
  @MethodSource("acceptedRows")
  void aNumberBoolOrEnumFieldTakesWhatProto3JsonTakes(Format format, Row row) throws Exception {
    assertThat(read(format, row)).isEqualTo(row.expected());
  }

  static Stream<Arguments> rejectedRows() {
    return Stream.of(
        new Row(Field.UINT32, "0x50", "\"0x50\"", "expected a uint32"),
        new Row(Field.UINT32, "0o120", "\"0o120\"", "proto3 JSON numbers are decimal"),
        new Row(Field.UINT32, "1_000", "\"1_000\"", "proto3 JSON numbers are decimal"),
        new Row(Field.UINT32, "-1", "-1", "expected a uint32"),
        new Row(Field.UINT32, "4294967296", "4294967296", "expected a uint32"),
        new Row(Field.UINT32, "80.5", "80.5", "expected a uint32"),
        new Row(Field.UINT32, "yes", "\"yes\"", "expected a uint32"),
        new Row(Field.UINT32, ".inf", "\".inf\"", "expected a uint32"),
        new Row(Field.UINT32, "[80]", "[80]", "expected a uint32 (a whole number from 0 to"
            + " 4294967295), got a list"),
        new Row(Field.UINT32_WRAPPER, "12:30", "\"12:30\"", "expected a uint32"),
        new Row(Field.INT64, "9223372036854775808", "9223372036854775808", "expected an int64"),
        new Row(Field.INT64, "0x10", "\"0x10\"", "proto3 JSON numbers are decimal"),
        new Row(Field.INT64, "1.5", "1.5", "expected an int64"),
        new Row(Field.DOUBLE, ".inf", "\".inf\"", "proto3 JSON writes Infinity, -Infinity and NaN"),
        new Row(Field.DOUBLE, "1_0", "\"1_0\"", "expected a double"),
        new Row(Field.BOOL, "yes", "\"yes\"", "expected true or false, got `yes` (YAML 1.1's"),
        new Row(Field.BOOL, "no", "\"no\"", "expected true or false, got `no`"),
        new Row(Field.BOOL, "on", "\"on\"", "expected true or false, got `on`"),
        new Row(Field.BOOL, "off", "\"off\"", "expected true or false, got `off`"),
        new Row(Field.BOOL, "y", "\"y\"", "expected true or false, got `y`"),
        new Row(Field.BOOL, "True", "\"True\"", "expected true or false, got `True`"),
        new Row(Field.BOOL, "1", "1", "expected true or false, got `1`"),
        new Row(Field.ENUM, "round_robin", "\"round_robin\"",
            "`round_robin` is not a value of envoy.config.cluster.v3.Cluster.LbPolicy; did you mean"
                + " `ROUND_ROBIN`?"),
        new Row(Field.ENUM, "RING_HASHH", "\"RING_HASHH\"", "did you mean `RING_HASH`?"),
        new Row(Field.ENUM, "yes", "\"yes\"", "`yes` is not a value of"),
        new Row(Field.DURATION, "5", "5", "expected a duration in seconds with an `s` suffix, such"
            + " as 5s or 0.25s, got `5`"),
        new Row(Field.DURATION, "5m", "\"5m\"", "expected a duration"),
        new Row(Field.DURATION, "{ seconds: 5 }", "{\"seconds\": 5}", "expected a duration"))
        .flatMap(r -> Stream.of(Arguments.of(Format.YAML, r), Arguments.of(Format.JSON, r)));
  }

  @ParameterizedTest(name = "{0}: {1}")
  @MethodSource("rejectedRows")
  void anythingElseIsAnErrorAtTheValue(Format format, Row row) throws Exception {
    String template = format == Format.YAML ? row.field().yaml : row.field().json;
    Path file = write(format, row);
    int at = template.indexOf("%s");
    int line = (int) template.substring(0, at).chars().filter(c -> c == '\n').count() + 1;
    int column = at - template.lastIndexOf('\n', at - 1);
    assertThatThrownBy(() -> new ConfigLoader(RuleCheck.OFF).load(file)).isInstanceOf(ConfigException.class)
        .hasMessageStartingWith(file + ":" + line + ":" + column + ": resources[0] (")
        .hasMessageContaining((String) row.expected());
  }

  private Object read(Format format, Row row) throws Exception {
    Path file = write(format, row);
    // what proto3 JSON takes is under test, not what Envoy allows (a port of 4294967295 reads)
    ServedConfig c = new ConfigLoader(RuleCheck.OFF).load(file).config();
    for (ResourceType t : ResourceType.values()) {
      if (c.defaults().get(t).size() == 1) {
        return row.field().get.apply(c.defaults().get(t).resources().values().iterator().next()
            .message());
      }
    }
    throw new AssertionError("no resource");
  }

  private Path write(Format format, Row row) throws Exception {
    Path file = dir.resolve(format == Format.YAML ? "c.yaml" : "c.json");
    Files.writeString(file, format == Format.YAML ? row.field().yaml.replace("%s", row.yaml())
        : row.field().json.replace("%s", row.json()));
    return file;
  }

  private static String unpackString(TypedExtensionConfig e) {
    try {
      return e.getTypedConfig().unpack(StringValue.class).getValue();
    } catch (com.google.protobuf.InvalidProtocolBufferException x) {
      throw new AssertionError(x);
    }
  }
}
