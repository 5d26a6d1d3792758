package dev.meridian.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.internal.config.ConfigLoader;
import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.Snapshot;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The fleet's YAML config (the restart mode's, as users write one) holds its JSON's resources. */
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
}
