package dev.meridian.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;

/** What the load generator relies on in the packaged meridian.jar (built before this module). */
class MeridianJarTest {
  @Test
  void javaDashJarOpensJavaNioSoNettyNeedNotZeroItsDirectMemory() throws Exception {
    Path jar = Path.of("..", "meridian-cli", "target", "meridian.jar");
    assumeTrue(Files.exists(jar), "meridian.jar is packaged by a reactor build (mvn verify)");
    try (JarFile j = new JarFile(jar.toFile())) {
      assertThat(j.getManifest().getMainAttributes().getValue("Add-Opens"))
          .isEqualTo("java.base/java.nio");
      assertThat(j.getManifest().getMainAttributes().getValue("Main-Class"))
          .isEqualTo("dev.meridian.cli.Main");
    }
    // The same opening the load generator gives a server it starts from the class path.
    assertThat(LoadGenerator.UNZEROED_DIRECT_MEMORY).contains("java.base/java.nio=ALL-UNNAMED");
  }

  @Test
  void theLoadGeneratorStartsServersWithTheLaunchersGcFlags() throws Exception {
    // The benchmark measures the server the way ./meridian runs it: the same G1 flags, in the
    // launcher's words, for the same JDK releases.
    String launcher = Files.readString(Path.of("..", "meridian"));
    assertThat(launcher).contains("fleet_gc=(" + String.join(" ", LoadGenerator.FLEET_GC) + ")");
    assertThat(launcher).contains("[ \"$major\" -lt 17 ] || [ \"$major\" -ge 20 ]");
    assertThat(LoadGenerator.hasFleetGcFlags(17)).isTrue();
    assertThat(LoadGenerator.hasFleetGcFlags(19)).isTrue();
    assertThat(LoadGenerator.hasFleetGcFlags(20)).isFalse();
    assertThat(LoadGenerator.hasFleetGcFlags(21)).isFalse();
  }

  @Test
  void theLoadGeneratorStartsServersWithTheLaunchersJitFlags() throws Exception {
    String launcher = Files.readString(Path.of("..", "meridian"));
    java.util.List<String> jit = LoadGenerator.fleetJit("dev.meridian");
    assertThat(launcher).contains("fleet_jit=(" + jit.get(0) + " \"" + jit.get(1) + "\")");
    assertThat(launcher).contains("fleet_c2=(" + String.join(" ", LoadGenerator.FLEET_C2) + ")");
    assertThat(launcher).contains("-gt 8 ]");
  }
}
