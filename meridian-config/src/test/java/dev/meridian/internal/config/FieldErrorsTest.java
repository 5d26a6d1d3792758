package dev.meridian.internal.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 18 §6: a config error points at the line and column of the offending field, not at the
 * resource's first line, and an unknown name gets the closest known one ("did you mean").
 */
class FieldErrorsTest {
  @TempDir Path dir;

  private ConfigException problems(String name, String text) throws Exception {
    Path p = dir.resolve(name);
    Files.writeString(p, text);
    try {
      new ConfigLoader().load(p);
    } catch (ConfigException e) {
      return e;
    }
    throw new AssertionError("loaded: " + text);
  }

  @Test
  void anUnknownFieldIsReportedAtItsLineWithTheClosestKnownField() throws Exception {
    ConfigException e = problems("c.yaml", """
        resources:
          - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
            name: backend
            type: EDS
            conect_timeout: 1s
        """);
    assertThat(e.problems()).containsExactly(dir.resolve("c.yaml") + ":5:5: resources[0]"
        + " (type.googleapis.com/envoy.config.cluster.v3.Cluster 'backend'): unknown field"
        + " `conect_timeout` in envoy.config.cluster.v3.Cluster; did you mean `connect_timeout`?");
  }

  @Test
  void aLowerCamelCaseTypoGetsTheLowerCamelCaseName() throws Exception {
    ConfigException e = problems("c.json", """
        {"resources": [{"@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster",
                        "name": "backend",
                        "connectTimout": "1s"}]}
        """);
    assertThat(e.getMessage()).startsWith(dir.resolve("c.json") + ":3:17: ")
        .endsWith("unknown field `connectTimout` in envoy.config.cluster.v3.Cluster; did you mean"
            + " `connectTimeout`?");
  }

  @Test
  void aNameFarFromEveryFieldGetsNoSuggestion() throws Exception {
    ConfigException e = problems("c.yaml", """
        resources:
          - { "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster, name: b, colour: blue }
        """);
    assertThat(e.getMessage()).endsWith("unknown field `colour` in envoy.config.cluster.v3.Cluster")
        .doesNotContain("did you mean");
  }

  @Test
  void aProblemDeepInsideNestedAnysNamesItsOwnLineAndPath() throws Exception {
    ConfigException e = problems("l.yaml", """
        resources:
          - "@type": type.googleapis.com/envoy.config.listener.v3.Listener
            name: l
            filter_chains:
              - filters:
                  - name: hcm
                    typed_config:
                      "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
                      stat_prefix: x
                      http_filters:
                        - name: router
                          typed_config:
                            "@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router
                            suppress_envoy_header: true
        """);
    assertThat(e.getMessage()).isEqualTo(dir.resolve("l.yaml") + ":14:21: resources[0]"
        + " (type.googleapis.com/envoy.config.listener.v3.Listener 'l'):"
        + " filter_chains[0].filters[0].typed_config.http_filters[0].typed_config: unknown field"
        + " `suppress_envoy_header` in envoy.extensions.filters.http.router.v3.Router; did you mean"
        + " `suppress_envoy_headers`?");
  }

  @Test
  void everyProblemOfAResourceIsReportedEachAtItsOwnLine() throws Exception {
    ConfigException e = problems("c.yaml", """
        resources:
          - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
            name: backend
            lb_policy: ROUND_ROBBIN
            respect_dns_ttl: yes
            connect_timeout: 5
            connectTimeout: 5s
            load_assignment:
              cluster_name: backend
              endpoints:
                - lb_endpoints:
                    - endpoint: { address: { socket_address: { address: 10.0.0.1, port_value: 0x50 } } }
        """);
    String c = dir.resolve("c.yaml") + ":";
    String r = " resources[0] (type.googleapis.com/envoy.config.cluster.v3.Cluster 'backend'): ";
    assertThat(e.problems()).containsExactly(
        c + "4:16:" + r + "lb_policy: `ROUND_ROBBIN` is not a value of"
            + " envoy.config.cluster.v3.Cluster.LbPolicy; did you mean `ROUND_ROBIN`?",
        c + "5:22:" + r + "respect_dns_ttl: expected true or false, got `yes` (YAML 1.1's"
            + " yes/no/on/off and capitalized forms are not booleans here)",
        c + "6:22:" + r + "connect_timeout: expected a duration in seconds with an `s` suffix,"
            + " such as 5s or 0.25s, got `5`",
        c + "7:5:" + r + "`connectTimeout` sets field `connect_timeout` again (set as"
            + " `connect_timeout` at line 6, column 5)",
        c + "12:87:" + r + "load_assignment.endpoints[0].lb_endpoints[0].endpoint.address"
            + ".socket_address.port_value: expected a uint32 (a whole number from 0 to 4294967295),"
            + " got `0x50` (proto3 JSON numbers are decimal, without underscores)");
  }

  @Test
  void twoFieldsOfOneOneofAreReportedAtTheSecond() throws Exception {
    ConfigException e = problems("l.yaml", """
        resources:
          - "@type": type.googleapis.com/envoy.config.listener.v3.Listener
            name: l
            socket_options:
              - level: 1
                name: 2
                int_value: 1
                buf_value: YWJj
        """);
    assertThat(e.getMessage()).startsWith(dir.resolve("l.yaml") + ":8:9: ")
        .endsWith("socket_options[0]: `buf_value` and `int_value` (at line 7, column 9) are"
            + " alternatives (oneof `value`): set only one");
  }

  @Test
  void aValueOfTheWrongShapeIsReportedAtTheValue() throws Exception {
    ConfigException e = problems("r.yaml", """
        resources:
          - "@type": type.googleapis.com/envoy.config.route.v3.RouteConfiguration
            name: r
            virtual_hosts:
              - name: v
                domains: "*"
        """);
    assertThat(e.getMessage()).startsWith(dir.resolve("r.yaml") + ":6:18: ")
        .endsWith("virtual_hosts[0].domains: expected a list, got `*`");
  }

  @Test
  void anAnyWithoutAKnownTypeIsReportedAtItsTypeUrl() throws Exception {
    ConfigException e = problems("e.yaml", """
        resources:
          - "@type": type.googleapis.com/envoy.config.core.v3.TypedExtensionConfig
            name: ext
            typed_config:
              "@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Routr
        """);
    assertThat(e.getMessage()).startsWith(dir.resolve("e.yaml") + ":5:16: ")
        .endsWith("typed_config.@type: unknown type"
            + " `type.googleapis.com/envoy.extensions.filters.http.router.v3.Routr`; did you mean"
            + " `type.googleapis.com/envoy.extensions.filters.http.router.v3.Router`?");
  }

  @Test
  void aMisspeltResourceTypeOrTopLevelKeyGetsTheClosestKnownOne() throws Exception {
    ConfigException e = problems("c.yaml", """
        resource:
          - { "@type": type.googleapis.com/envoy.config.cluster.v3.Clustr, name: x }
        grups: []
        """);
    assertThat(e.problems()).containsExactly(
        dir.resolve("c.yaml") + ":1:1: unknown top-level key 'resource' (expected one of"
            + " [resources, groups, secret_access]); did you mean `resources`?",
        dir.resolve("c.yaml") + ":3:1: unknown top-level key 'grups' (expected one of"
            + " [resources, groups, secret_access]); did you mean `groups`?");
    e = problems("d.yaml", """
        resources:
          - { "@type": type.googleapis.com/envoy.config.cluster.v3.Clustr, name: x }
        """);
    assertThat(e.getMessage()).isEqualTo(dir.resolve("d.yaml") + ":2:16: resources[0]: '@type'"
        + " type.googleapis.com/envoy.config.cluster.v3.Clustr is unknown type; did you mean"
        + " `type.googleapis.com/envoy.config.cluster.v3.Cluster`?");
  }

  @Test
  void aYamlSyntaxErrorNamesItsLineAndColumn() throws Exception {
    ConfigException e = problems("c.yaml", """
        resources:
          - name: a
           bad: indentation
        """);
    assertThat(e.getMessage()).startsWith(dir.resolve("c.yaml") + ":3:")
        .contains("invalid YAML");
  }
}
