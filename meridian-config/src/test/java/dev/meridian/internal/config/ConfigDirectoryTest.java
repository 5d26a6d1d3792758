package dev.meridian.internal.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A config directory names what it does not read: nothing meant as config is skipped silently. */
class ConfigDirectoryTest {
  @TempDir Path dir;

  static final String CLUSTER = """
      resources:
        - { "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster, name: c }
      """;

  @Test
  void whatLooksMeantAsConfigAndIsNotReadIsAWarningTheRestIsNamed() throws Exception {
    Files.writeString(dir.resolve("a.yaml"), CLUSTER);
    Files.writeString(dir.resolve("notes.txt"), "notes\n");
    Files.writeString(dir.resolve("README.md"), "# readme\n");
    Files.createDirectory(dir.resolve("sub"));
    Files.writeString(dir.resolve("sub/x.yaml"), "resources: [ broken\n");
    Files.writeString(dir.resolve("a.yaml.bak"), CLUSTER);
    Files.createSymbolicLink(dir.resolve("gone.yaml"), Path.of("missing.yaml"));
    Files.createDirectory(dir.resolve(".hidden"));
    Files.writeString(dir.resolve(".hidden/y.yaml"), CLUSTER);

    ConfigDirectory.Listing l = ConfigDirectory.scan(dir);

    assertThat(l.read()).containsExactly(dir.resolve("a.yaml"));
    assertThat(l.ignored()).containsExactly(dir.resolve("README.md"), dir.resolve("notes.txt"));
    assertThat(l.warnings()).extracting(ConfigDirectory.NotRead::logLine).containsExactly(
        "config_not_read path=" + dir.resolve("a.yaml.bak") + " reason=\"not read: only names"
            + " ending in .yaml, .yml or .json are read\" fix=\"rename it to end in one of them,"
            + " or start its name with '.' to keep it unread without this warning\"",
        "config_not_read path=" + dir.resolve("gone.yaml") + " reason=\"not read: a symbolic"
            + " link to missing.yaml, which does not exist\" fix=\"point it at a file\"",
        "config_not_read path=" + dir.resolve("sub") + " reason=\"a subdirectory, not read: a"
            + " config directory's own files are read, not its subdirectories'; it holds"
            + " sub/x.yaml\" fix=\"move its files up into " + dir + ", or start its name with"
            + " '.' to keep it unread without this warning\"");
    // The loader reads what the listing says, and the broken file below is not its problem.
    assertThat(new ConfigLoader().load(dir).files()).isEqualTo(l.read());
  }

  @Test
  void aSubdirectoryWithoutConfigFilesIsStillNamed() throws Exception {
    Files.writeString(dir.resolve("a.yaml"), CLUSTER);
    Files.createDirectory(dir.resolve("docs"));
    Files.writeString(dir.resolve("docs/notes.txt"), "x\n");
    assertThat(ConfigDirectory.scan(dir).warnings()).singleElement()
        .satisfies(w -> assertThat(w.reason()).isEqualTo("a subdirectory, not read: a config"
            + " directory's own files are read, not its subdirectories'"));
  }

  @Test
  void aFileConfigHasNothingElseToSay() throws Exception {
    Path f = Files.writeString(dir.resolve("a.yaml"), CLUSTER);
    Files.writeString(dir.resolve("a.yaml.bak"), CLUSTER);
    ConfigDirectory.Listing l = ConfigDirectory.scan(f);
    assertThat(l.read()).containsExactly(f);
    assertThat(l.ignored()).isEmpty();
    assertThat(l.warnings()).isEmpty();
  }

  @Test
  void namesThatAConfigFileCouldHaveHadAreNearlyConfig() {
    assertThat(ConfigDirectory.nearlyConfig("a.yaml.bak")).isTrue();
    assertThat(ConfigDirectory.nearlyConfig("a.yml~")).isTrue();
    assertThat(ConfigDirectory.nearlyConfig("a.yaml.j2")).isTrue();
    assertThat(ConfigDirectory.nearlyConfig("a.ymal")).isTrue();
    assertThat(ConfigDirectory.nearlyConfig("a.jsonc")).isTrue();
    assertThat(ConfigDirectory.nearlyConfig("a.jsn")).isTrue();
    assertThat(ConfigDirectory.nearlyConfig("README.md")).isFalse();
    assertThat(ConfigDirectory.nearlyConfig("notes.txt")).isFalse();
    assertThat(ConfigDirectory.nearlyConfig("pom.xml")).isFalse();
    assertThat(ConfigDirectory.nearlyConfig("config.toml")).isFalse();
    assertThat(ConfigDirectory.nearlyConfig("Makefile")).isFalse();
  }

  @Test
  void filesAreNamedRelativeToTheDirectoryForTheLog() throws Exception {
    Path a = Files.writeString(dir.resolve("a.yaml"), CLUSTER);
    Path b = Files.writeString(dir.resolve("b.json"), "{}");
    assertThat(ConfigDirectory.names(dir, java.util.List.of(a, b), 50)).isEqualTo("a.yaml,b.json");
    assertThat(ConfigDirectory.names(dir, java.util.List.of(a, b), 1)).isEqualTo("a.yaml,+1 more");
    assertThat(ConfigDirectory.names(a, java.util.List.of(a), 50)).isEqualTo("a.yaml");
  }
}
