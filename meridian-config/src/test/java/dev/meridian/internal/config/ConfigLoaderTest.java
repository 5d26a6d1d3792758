package dev.meridian.internal.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.internal.protocol.XdsResource;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigLoaderTest {
  @TempDir Path dir;

  private static final String CLUSTER = """
        - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
          name: backend
          type: EDS
          eds_cluster_config: { eds_config: { ads: {}, resource_api_version: V3 } }
      """;

  Path write(String name, String text) throws IOException {
    Path p = dir.resolve(name);
    Files.writeString(p, text);
    return p;
  }

  @Test
  void bundledQuickstartExampleLoads() throws Exception {
    Path example = Path.of("..", "examples", "quickstart.yaml");
    ConfigLoader.Loaded loaded = new ConfigLoader().load(example);
    ServedConfig c = loaded.config();
    assertThat(c.defaults().get(ResourceType.LISTENER).resources()).containsKey("http");
    assertThat(c.defaults().get(ResourceType.ROUTE).resources()).containsKey("local_routes");
    assertThat(c.defaults().get(ResourceType.CLUSTER).resources()).containsKeys("greeter-v1", "greeter-v2");
    assertThat(c.defaults().get(ResourceType.ENDPOINT).resources()).containsKeys("greeter-v1", "greeter-v2");
    assertThat(c.groupFor(Node.newBuilder().setId("canary-1").build())).isEqualTo("canary");
    // Nested Anys are real messages, not opaque blobs.
    Listener l = (Listener) c.defaults().get(ResourceType.LISTENER).get("http").message();
    HttpConnectionManager hcm = l.getFilterChains(0).getFilters(0).getTypedConfig()
        .unpack(HttpConnectionManager.class);
    assertThat(hcm.getRds().getRouteConfigName()).isEqualTo("local_routes");
  }

  @Test
  void everyV3ResourceTypeIsAccepted() throws Exception {
    Path p = write("all.yaml", """
        resources:
          - { "@type": type.googleapis.com/envoy.config.listener.v3.Listener, name: l }
          - { "@type": type.googleapis.com/envoy.config.route.v3.RouteConfiguration, name: r }
          - { "@type": type.googleapis.com/envoy.config.route.v3.ScopedRouteConfiguration, name: s, route_configuration_name: r, key: { fragments: [ { string_key: x } ] } }
          - { "@type": type.googleapis.com/envoy.config.route.v3.VirtualHost, name: r/example.com, domains: [example.com] }
          - { "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster, name: c }
          - { "@type": type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment, cluster_name: c }
          - { "@type": type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret, name: sec, generic_secret: { secret: { inline_string: shh } } }
          - { "@type": type.googleapis.com/envoy.service.runtime.v3.Runtime, name: rt, layer: { a: 1 } }
          - "@type": type.googleapis.com/envoy.config.core.v3.TypedExtensionConfig
            name: ext
            typed_config: { "@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router }
          - "@type": type.googleapis.com/envoy.service.discovery.v3.Resource
            name: xdstp://a.example/envoy.config.endpoint.v3.LbEndpoint/c/zone/one
            resource: { "@type": type.googleapis.com/envoy.config.endpoint.v3.LbEndpoint }
        """);
    ServedConfig c = new ConfigLoader().load(p).config();
    for (ResourceType t : ResourceType.values()) {
      assertThat(c.defaults().get(t).size()).as(t.name()).isEqualTo(1);
    }
  }

  @Test
  void lowerCamelCaseAndJsonFilesAreAccepted() throws Exception {
    Path p = write("c.json", """
        {"resources": [{"@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster",
          "name": "backend", "connectTimeout": "2s", "edsClusterConfig": {"serviceName": "x"}}]}
        """);
    XdsResource r = new ConfigLoader().load(p).config().defaults().get(ResourceType.CLUSTER).get("backend");
    assertThat(r).isNotNull();
  }

  @Test
  void resourceWrapperAddsATtl() throws Exception {
    Path p = write("ttl.yaml", """
        resources:
          - "@type": type.googleapis.com/envoy.service.discovery.v3.Resource
            ttl: 30s
            resource: { "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster, name: temp }
        """);
    XdsResource r = new ConfigLoader().load(p).config().defaults().get(ResourceType.CLUSTER).get("temp");
    assertThat(r.ttl().getSeconds()).isEqualTo(30);
  }

  @Test
  void directoryOfFilesIsMergedAndGroupsSelectNodes() throws Exception {
    write("a.yaml", "resources:\n" + CLUSTER);
    write("b.yml", """
        groups:
          - name: canary
            match: { node_id: "canary-*", node_cluster: "eu-*" }
            resources:
              - { "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster, name: canary-backend }
        """);
    write("notes.txt", "ignored");
    write(".hidden.yaml", "this: [is not read");
    ConfigLoader.Loaded loaded = new ConfigLoader().load(dir);
    assertThat(loaded.files()).hasSize(2);
    ServedConfig c = loaded.config();
    assertThat(c.groupFor(Node.newBuilder().setId("canary-1").setCluster("eu-west").build())).isEqualTo("canary");
    // All given keys must match.
    assertThat(c.groupFor(Node.newBuilder().setId("canary-1").setCluster("us-east").build()))
        .isEqualTo(ServedConfig.DEFAULT_GROUP);
    assertThat(c.snapshot("canary").get(ResourceType.CLUSTER).resources()).containsOnlyKeys("canary-backend");
  }

  @Test
  void yamlSyntaxErrorNamesFileAndLine() throws Exception {
    Path p = write("bad.yaml", "resources:\n  - name: [unclosed\n");
    assertThatThrownBy(() -> new ConfigLoader().load(p)).isInstanceOf(ConfigException.class)
        .hasMessageContaining("bad.yaml:").hasMessageContaining("invalid YAML");
  }

  @Test
  void unknownFieldNamesFileResourceAndField() throws Exception {
    // Issue 18 §6: the line and column of the field itself, not of the resource's first line.
    Path p = write("bad.yaml", """
        resources:
          - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
            name: backend
            conect_timeout: 1s
        """);
    assertThatThrownBy(() -> new ConfigLoader().load(p)).isInstanceOf(ConfigException.class)
        .hasMessageContaining("bad.yaml:4:5: ")
        .hasMessageContaining("resources[0]")
        .hasMessageContaining("'backend'")
        .hasMessageContaining("conect_timeout");
  }

  @Test
  void unknownFieldInsideANestedAnyIsReported() throws Exception {
    Path p = write("bad.yaml", """
        resources:
          - "@type": type.googleapis.com/envoy.config.listener.v3.Listener
            name: l
            filter_chains:
              - filters:
                  - name: hcm
                    typed_config:
                      "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
                      stat_prefx: x
        """);
    assertThatThrownBy(() -> new ConfigLoader().load(p)).hasMessageContaining("stat_prefx");
  }

  @Test
  void unknownTypeIsRejected() throws Exception {
    Path p = write("bad.yaml", """
        resources:
          - { "@type": type.googleapis.com/envoy.config.cluster.v3.Clustr, name: x }
          - { "@type": type.googleapis.com/envoy.config.core.v3.Node, id: x }
        """);
    assertThatThrownBy(() -> new ConfigLoader().load(p))
        .hasMessageContaining("envoy.config.cluster.v3.Clustr is unknown type")
        .hasMessageContaining("envoy.config.core.v3.Node is a known message, but not a resource type");
  }

  @Test
  void duplicateNameWithinATypeIsRejected() throws Exception {
    Path p = write("dup.yaml", "resources:\n" + CLUSTER + CLUSTER);
    assertThatThrownBy(() -> new ConfigLoader().load(p))
        .hasMessageContaining("dup.yaml:6:")
        .hasMessageContaining("duplicate name")
        .hasMessageContaining("first defined at " + p + ":2");
  }

  @Test
  void sameNameInDifferentTypesOrGroupsIsFine() throws Exception {
    Path p = write("ok.yaml", """
        resources:
          - { "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster, name: backend }
          - { "@type": type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment, cluster_name: backend }
        groups:
          - name: g
            match: { node_id: "x" }
            resources:
              - { "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster, name: backend }
        """);
    assertThat(new ConfigLoader().load(p).resources()).isEqualTo(3);
  }

  @Test
  void missingNameIsRejected() throws Exception {
    Path p = write("bad.yaml", """
        resources:
          - { "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster, type: EDS }
          - { "@type": type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment }
        """);
    assertThatThrownBy(() -> new ConfigLoader().load(p))
        .hasMessageContaining("resources[0] (type.googleapis.com/envoy.config.cluster.v3.Cluster): missing 'name'")
        .hasMessageContaining("resources[1] (type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment): missing 'cluster_name'");
  }

  @Test
  void missingTypeAndBadGroupsAreReportedTogether() throws Exception {
    Path p = write("bad.yaml", """
        resources:
          - { name: x }
        groups:
          - name: default
            match: { node_id: x }
          - name: g
            match: { node_role: x }
        extra: 1
        """);
    assertThatThrownBy(() -> new ConfigLoader().load(p)).isInstanceOfSatisfying(ConfigException.class,
        e -> assertThat(e.problems()).hasSize(4).anyMatch(m -> m.contains("missing '@type'"))
            .anyMatch(m -> m.contains("reserved")).anyMatch(m -> m.contains("unknown match key 'node_role'"))
            .anyMatch(m -> m.contains("unknown top-level key 'extra'")));
  }

  @Test
  void unchangedResourcesKeepTheirIdentityAcrossReloads() throws Exception {
    Path p = write("c.yaml", "resources:\n" + CLUSTER
        + "  - { \"@type\": type.googleapis.com/envoy.config.cluster.v3.Cluster, name: other }\n");
    ConfigLoader loader = new ConfigLoader();
    XdsResource before = loader.load(p).config().defaults().get(ResourceType.CLUSTER).get("backend");
    Files.writeString(p, "resources:\n" + CLUSTER
        + "  - { \"@type\": type.googleapis.com/envoy.config.cluster.v3.Cluster, name: other, connect_timeout: 3s }\n");
    ServedConfig after = loader.load(p).config();
    assertThat(after.defaults().get(ResourceType.CLUSTER).get("backend")).isSameAs(before);
    assertThat(after.defaults().get(ResourceType.CLUSTER).get("other").version())
        .isNotEqualTo(before.version());
  }

  /**
   * The parallel prebuild (64+ new resources) counts what the walk uses: a text in the defaults and
   * in a group is built once and shared, not built per list with all but one copy dropped.
   */
  @Test
  void aResourceInTheDefaultsAndAGroupIsBuiltAndCountedOnceAlsoWhenPrebuiltInParallel()
      throws Exception {
    StringBuilder list = new StringBuilder("[");
    for (int i = 0; i < 70; i++) {
      list.append(i == 0 ? "" : ", ").append("{\"@type\": \"type.googleapis.com/envoy.config.")
          .append("cluster.v3.Cluster\", \"name\": \"c-").append(i).append("\"}");
    }
    list.append("]");
    Path p = write("c.json", "{\"resources\": " + list + ", \"groups\": [{\"name\": \"g\", "
        + "\"match\": {\"node_id\": \"g-*\"}, \"resources\": " + list + "}]}");
    ConfigLoader loader = new ConfigLoader();
    ServedConfig config = loader.load(p).config();
    assertThat(loader.resourcesSerialized()).isEqualTo(70);
    assertThat(config.snapshot("g").get(ResourceType.CLUSTER).get("c-7"))
        .isSameAs(config.defaults().get(ResourceType.CLUSTER).get("c-7"));
  }

  @Test
  void eachNewOrChangedResourceIsSerializedOnceAndUnchangedOnesNotAgain() throws Exception {
    Path p = write("c.yaml", "resources:\n" + CLUSTER
        + "  - { \"@type\": type.googleapis.com/envoy.config.cluster.v3.Cluster, name: other }\n");
    ConfigLoader loader = new ConfigLoader();
    assertThat(loader.resourcesSerialized()).isZero();
    loader.load(p);
    assertThat(loader.resourcesSerialized()).isEqualTo(2);
    loader.load(p); // the same text: both reused
    assertThat(loader.resourcesSerialized()).isEqualTo(2);
    Files.writeString(p, "resources:\n" + CLUSTER
        + "  - { \"@type\": type.googleapis.com/envoy.config.cluster.v3.Cluster, name: other, connect_timeout: 3s }\n");
    loader.load(p); // one changed
    assertThat(loader.resourcesSerialized()).isEqualTo(3);
    // A load that fails still built its good resources: counted, though not kept.
    Files.writeString(p, "resources:\n" + CLUSTER
        + "  - { \"@type\": type.googleapis.com/envoy.config.cluster.v3.Cluster, name: third }\n"
        + "  - { \"@type\": type.googleapis.com/envoy.config.cluster.v3.Cluster }\n");
    assertThatThrownBy(() -> loader.load(p)).isInstanceOf(ConfigException.class);
    assertThat(loader.resourcesSerialized()).isEqualTo(4);
    // Another loader counts its own.
    assertThat(new ConfigLoader().resourcesSerialized()).isZero();
  }

  @Test
  void aTypeWithoutChangeKeepsItsSnapshotAcrossReloadsAndAChangedTypeGetsANewOne() throws Exception {
    String endpoints = """
          - "@type": type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment
            cluster_name: backend
            endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address:         { address: 10.0.0.1, port_value: PORT } } } }] }]
        """;
    Path p = write("c.yaml", "resources:\n" + CLUSTER + endpoints.replace("PORT", "80"));
    ConfigLoader loader = new ConfigLoader();
    ServedConfig first = loader.load(p).config();
    Files.writeString(p, "resources:\n" + CLUSTER + endpoints.replace("PORT", "81"));
    ServedConfig second = loader.load(p).config();

    // Same cluster instances: the very snapshot, with its version and encodings.
    assertThat(second.defaults().get(ResourceType.CLUSTER))
        .isSameAs(first.defaults().get(ResourceType.CLUSTER));
    assertThat(second.defaults().get(ResourceType.ENDPOINT))
        .isNotSameAs(first.defaults().get(ResourceType.ENDPOINT));
    assertThat(second.defaults().changedSince(first.defaults()))
        .containsOnlyKeys(ResourceType.ENDPOINT);

    // A cluster removed: the same instances remain, but not all of them; a new snapshot.
    Files.writeString(p, "resources:\n" + endpoints.replace("PORT", "81"));
    ServedConfig third = loader.load(p).config();
    assertThat(third.defaults().get(ResourceType.CLUSTER).size()).isZero();
    assertThat(third.defaults().get(ResourceType.ENDPOINT))
        .isSameAs(second.defaults().get(ResourceType.ENDPOINT));
  }

  @Test
  void emptyFileServesNothing() throws Exception {
    Path p = write("empty.yaml", "");
    assertThat(new ConfigLoader().load(p).resources()).isZero();
  }

  @Test
  void missingPathIsReported() {
    assertThatThrownBy(() -> new ConfigLoader().load(dir.resolve("nope.yaml")))
        .hasMessageContaining("no such file or directory");
  }

  /** Strict JSON files take the fast reader ({@link JsonConfig}); it must agree with YAML's. */
  @org.junit.jupiter.api.Nested
  class StrictJsonFiles {
    static final String JSON = """
        {"resources": [
          {"@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", "name": "a\\u0041/b",
           "connect_timeout": "2.5s", "per_connection_buffer_limit_bytes": 32768,
           "lb_policy": "RING_HASH", "ring_hash_lb_config": {"minimum_ring_size": 1024},
           "respect_dns_ttl": true, "load_balancing_policy": null,
           "metadata": {"filter_metadata": {"x": {"n": -1.5e3, "s": "line\\nbreak \\"q\\"", "z": 0, "b": false}}}},
          {"@type": "type.googleapis.com/envoy.service.discovery.v3.Resource", "ttl": "30s",
           "resource": {"@type": "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment",
                        "cluster_name": "aA/b"}},
          {"@type": "type.googleapis.com/envoy.config.listener.v3.Listener", "name": "l",
           "filter_chains": [{"filters": [{"name": "hcm", "typed_config": {
             "@type": "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
             "stat_prefix": "x", "rds": {"route_config_name": "r", "config_source": {"ads": {}}}}}]}]}
        ],
        "groups": [{"name": "g", "match": {"node_id": "canary-*"}, "resources": [
          {"@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", "name": "c"}]}]}
        """;

    @Test
    void strictJsonIsReadByTheFastReader() throws Exception {
      assertThat(JsonConfig.readJson(JSON)).isNotNull();
      assertThat(JsonConfig.readYamlAsJson(JSON)).isNotNull();
      assertThat(JsonConfig.readYamlAsJson("# yaml\n" + JSON)).isNull();
      assertThat(JsonConfig.readYamlAsJson("resources: []")).isNull();
      assertThat(JsonConfig.readYamlAsJson("{\"resources\": [1,]}")).isNull();
      assertThat(JsonConfig.readYamlAsJson("{\"a\": 01}")).isNull();
      assertThat(JsonConfig.readYamlAsJson("{\"a\": \"tab\there\"}")).isNull();
    }

    @Test
    void jsonAndYamlReadersProduceTheSameResources() throws Exception {
      ServedConfig fast = new ConfigLoader().load(write("c.json", JSON)).config();
      // A leading comment makes it YAML (which reads JSON too): the other reader, same text.
      ServedConfig yaml = new ConfigLoader().load(write("c.yaml", "# yaml\n" + JSON)).config();
      for (String group : yaml.groupNames()) {
        for (ResourceType t : ResourceType.values()) {
          assertThat(fast.snapshot(group).get(t).resources()).as(group + " " + t)
              .hasSameSizeAs(yaml.snapshot(group).get(t).resources());
          yaml.snapshot(group).get(t).resources().forEach((name, r) ->
              assertThat(fast.snapshot(group).get(t).get(name).version()).as(name).isEqualTo(r.version()));
        }
      }
      assertThat(fast.defaults().get(ResourceType.CLUSTER).resources()).containsOnlyKeys("aA/b");
      assertThat(fast.defaults().get(ResourceType.ENDPOINT).get("aA/b").ttl().getSeconds()).isEqualTo(30);
      assertThat(fast.groupFor(Node.newBuilder().setId("canary-1").build())).isEqualTo("g");
    }

    @Test
    void aOneResourceEditKeepsEveryOtherResourceAsItWas() throws Exception {
      StringBuilder json = new StringBuilder("{\"resources\": [\n");
      for (int i = 0; i < 50; i++) {
        json.append(i == 0 ? "" : ",\n").append("{\"@type\": \"type.googleapis.com/envoy.config.cluster.v3.Cluster\", \"name\": \"c")
            .append(i).append("\", \"connect_timeout\": \"1s\"}");
      }
      String before = json + "]}";
      Path p = write("big.json", before);
      ConfigLoader loader = new ConfigLoader();
      ServedConfig first = loader.load(p).config();
      Files.writeString(p, before.replace("\"c7\", \"connect_timeout\": \"1s\"", "\"c7\", \"connect_timeout\": \"2s\""));
      ServedConfig second = loader.load(p).config();
      assertThat(second.defaults().changedSince(first.defaults()).get(ResourceType.CLUSTER))
          .containsExactly("c7");
      for (int i = 0; i < 50; i++) {
        if (i != 7) {
          assertThat(second.defaults().get(ResourceType.CLUSTER).get("c" + i))
              .isSameAs(first.defaults().get(ResourceType.CLUSTER).get("c" + i));
        }
      }
    }

    @Test
    void problemsInAJsonFileNameTheLineAndColumnOfTheField() throws Exception {
      Path p = write("bad.json", """
          {
            "resources": [
              {"@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", "name": "ok"},

              {"@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", "name": "x",
               "conect_timeout": "1s"},
              {"@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster",
               "name": "y", "name": "z"}
            ],
            "extra": 1
          }
          """);
      assertThatThrownBy(() -> new ConfigLoader().load(p)).isInstanceOfSatisfying(ConfigException.class,
          e -> assertThat(e.problems()).hasSize(3)
              .anyMatch(m -> m.contains("bad.json:6:6: resources[1]") && m.contains("conect_timeout"))
              .anyMatch(m -> m.contains("bad.json:8:19: resources[2]") && m.contains("duplicate key `name`"))
              .anyMatch(m -> m.contains("bad.json:10:3: unknown top-level key 'extra'")));
    }

    @Test
    void aJsonFileThatIsNotStrictJsonIsAnErrorButTheSameTextAsYamlLoads() throws Exception {
      // Issue 18 §3: a .json file is strict JSON, not silently read again as YAML.
      String lenient = """
          {"resources": [  # YAML allows comments, and unquoted keys
            {"@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", name: "x"}
          ]}
          """;
      Path p = write("lenient.json", lenient);
      assertThatThrownBy(() -> new ConfigLoader().load(p))
          .hasMessage(p + ":1:18: invalid JSON: comments are not allowed in JSON (RFC 8259); a"
              + " .yaml file may have them");
      assertThat(new ConfigLoader().load(write("lenient.yaml", lenient)).config().defaults()
          .get(ResourceType.CLUSTER).resources()).containsOnlyKeys("x");
      Path dup = write("dup.json", "{\"resources\": [], \"resources\": []}\n");
      assertThatThrownBy(() -> new ConfigLoader().load(dup)).hasMessageContaining("dup.json:1:")
          .hasMessageContaining("duplicate key");
    }
  }

  // Issue 25, found by fuzzing: an alias inside the node it names made a cyclic tree, and the
  // load threw IllegalStateException instead of naming the problem.
  @Test
  void aYamlAliasInsideTheNodeItNamesIsAProblemOfTheConfig() throws Exception {
    Path p = write("cycle.yaml", """
        a: &a [x, *a]
        resources: []
        """);
    assertThatThrownBy(() -> new ConfigLoader().load(p)).isInstanceOf(ConfigException.class)
        .hasMessageContaining("cycle.yaml:1:")
        .hasMessageContaining("a YAML alias refers to a node that contains it");
  }

  @Test
  void yamlNestedDeeperThanAThousandLevelsIsAProblemOfTheConfig() throws Exception {
    // Block style: flow collections this deep are refused by the JSON-shaped reader first.
    StringBuilder deep = new StringBuilder("resources:\n");
    for (int i = 0; i < 1001; i++) {
      deep.append("  ".repeat(i + 1)).append("- \n");
    }
    Path p = write("deep.yaml", deep.toString());
    assertThatThrownBy(() -> new ConfigLoader().load(p)).isInstanceOf(ConfigException.class)
        .hasMessageContaining("deep.yaml:")
        .hasMessageContaining("nested deeper than 1000 levels");
  }
}
