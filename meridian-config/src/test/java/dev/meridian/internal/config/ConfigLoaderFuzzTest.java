package dev.meridian.internal.config;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.meridian.xds.ResourceType;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Issue 25: the config loader on arbitrary bytes, as a YAML file and as a JSON file. A config is
 * loaded or rejected with a {@link ConfigException}, nothing else escapes; and a rejected config
 * changes nothing (docs/config.md: a config with any problem is rejected as a whole).
 */
class ConfigLoaderFuzzTest {
  static final String GOOD = """
      resources:
        - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
          name: backend
          type: EDS
          eds_cluster_config: { eds_config: { ads: {}, resource_api_version: V3 } }
        - "@type": type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment
          cluster_name: backend
      groups:
        - name: canary
          match: { node_id: canary-1 }
          resources:
            - { "@type": type.googleapis.com/envoy.config.listener.v3.Listener, name: l }
      """;

  @FuzzTest
  void arbitraryBytesAsYamlLoadOrAreRejectedWholeWithAConfigException(byte[] input) {
    loadOrRejectWhole("fuzz.yaml", input);
  }

  @FuzzTest
  void arbitraryBytesAsJsonLoadOrAreRejectedWholeWithAConfigException(byte[] input) {
    loadOrRejectWhole("fuzz.json", input);
  }

  private static void loadOrRejectWhole(String name, byte[] input) {
    ConfigLoader loader = new ConfigLoader();
    ConfigLoader.Loaded good = loadGood(loader);
    try {
      loadOrThrow(loader, name, input);
      return; // a config it accepts is served whole; nothing more to check
    } catch (ConfigException rejected) {
      assertThat(rejected.problems()).isNotEmpty();
    }
    // Rejected: the loader still holds the last good config. Loading it again builds nothing
    // (every resource comes from its cache) and keeps each type's snapshot (from its last load).
    long serialized = loader.resourcesSerialized();
    ConfigLoader.Loaded again = loadGood(loader);
    assertThat(loader.resourcesSerialized()).as("resources built again").isEqualTo(serialized);
    for (ResourceType t : ResourceType.values()) {
      assertThat(again.config().defaults().get(t)).as(t.name())
          .isSameAs(good.config().defaults().get(t));
    }
    assertThat(again.config().groupNames()).isEqualTo(good.config().groupNames());
  }

  private static ConfigLoader.Loaded loadGood(ConfigLoader loader) {
    try {
      return loadOrThrow(loader, "good.yaml", GOOD.getBytes(StandardCharsets.UTF_8));
    } catch (ConfigException e) {
      throw new AssertionError("the known-good config was rejected", e);
    }
  }

  private static ConfigLoader.Loaded loadOrThrow(ConfigLoader loader, String name, byte[] bytes)
      throws ConfigException {
    Path file = Path.of(name);
    return loader.load(new ConfigLoader.Contents(List.of(file), Map.of(file, bytes), Map.of()));
  }
}
