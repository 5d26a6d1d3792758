package dev.meridian.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.internal.config.ConfigLoader;
import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.Snapshot;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The fleet's YAML config (as users write one, issue 23) holds its JSON's resources. */
class FleetTest {
  @TempDir Path dir;

  @Test
  void theYamlConfigServesWhatTheJsonConfigServes() throws Exception {
    Fleet fleet = new Fleet(300, 3); // past 256: the endpoints' addresses use two octets
    fleet.changeAllClusters();
    fleet.changeEndpoints(7);
    fleet.writeMeridianConfig(dir.resolve("fleet.json"));
    fleet.writeMeridianYaml(dir.resolve("fleet.yaml"));

    Snapshot json = new ConfigLoader().load(dir.resolve("fleet.json")).config().defaults();
    Snapshot yaml = new ConfigLoader().load(dir.resolve("fleet.yaml")).config().defaults();

    for (ResourceType t : java.util.List.of(ResourceType.CLUSTER, ResourceType.ENDPOINT)) {
      assertThat(yaml.get(t).size()).isEqualTo(300);
      assertThat(yaml.get(t).versionMap()).isEqualTo(json.get(t).versionMap()); // content hashes
    }
  }

  @Test
  void theYamlConfigIsBlockStyleWithOneTypedItemPerResource() throws Exception {
    Path file = dir.resolve("fleet.yaml");
    new Fleet(2, 2).writeMeridianYaml(file);
    java.util.List<String> lines = java.nio.file.Files.readAllLines(file);

    assertThat(lines).filteredOn(l -> l.startsWith("  - \"@type\": ")).hasSize(4);
    // Block style: the only flow mapping is ADS's empty one.
    assertThat(lines).filteredOn(l -> l.contains("{") || l.contains("["))
        .containsExactly("        ads: {}", "        ads: {}");
    assertThat(lines).filteredOn(l -> !l.isBlank())
        .allSatisfy(l -> assertThat(l.length() - l.stripLeading().length()).isEven()); // 2-space
    assertThat(lines).contains("          - endpoint:", "                  port_value: 10000");
  }
}
