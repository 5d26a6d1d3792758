package dev.meridian.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code meridian serve} measured on the config format the run names (issue 23): YAML as users
 * write it by default, strict JSON on request; every event's file is read by the server, and
 * the rows and the raw lines say which format it was.
 */
class ConfigFormatTest {
  @TempDir Path dir;

  @ParameterizedTest(name = "--config-format {0}")
  @ValueSource(strings = {"yaml", "json"})
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  void everyEventReloadsTheConfigInTheNamedFormat(String format) throws Exception {
    Path jar = Path.of("..", "meridian-cli", "target", "meridian.jar");
    assumeTrue(Files.exists(jar), "meridian.jar is packaged by a reactor build (mvn verify)");
    Path work = dir.resolve("work");
    Path raw = dir.resolve("raw.tsv");

    List<LoadGenerator.Result> results = new LoadGenerator(new String[] {
        "--server", "meridian", "--config-format", format, "--clients", "5", "--clusters", "10",
        "--event", "all", "--generator-warmup", "false", "--meridian-jar", jar.toString(),
        "--server-jvm", "", "--client-transport", "nio", "--settle-ms", "200", "--timeout", "60",
        "--work-dir", work.toString(), "--raw", raw.toString()}).run();

    assertThat(results).extracting(LoadGenerator.Result::event)
        .containsExactly("connect", "all-clusters", "one-endpoint");
    for (LoadGenerator.Result r : results) {
      assertThat(r.reached()).as(r.event()).isEqualTo(5);
      assertThat(r.mismatches()).as(r.event()).isZero();
      assertThat(r.server()).isEqualTo("meridian (" + format + ")");
      assertThat(r.wallSeconds()).as(r.event()).isPositive();
    }
    Path config = work.resolve("config-meridian-sotw-10x5." + format);
    String log = Files.readString(work.resolve("server-meridian-sotw-10x5.log"));
    assertThat(log).contains("config_load result=ok resources=20 groups=1 path=" + config);
    // Both edits were renames of a file in this format over the config, read by the server.
    assertThat(log).contains("config_reload result=ok resources=20 groups=1 files=1 changed=10 ",
        "config_reload result=ok resources=20 groups=1 files=1 changed=1 ");
    assertThat(Files.readString(config)).startsWith(format.equals("yaml") ? "# " : "{");
    assertThat(Files.readAllLines(raw)).map(Growth.Raw::parse)
        .extracting(Growth.Raw::event, Growth.Raw::reached)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("connect", 5),
            org.assertj.core.groups.Tuple.tuple("all-clusters", 5),
            org.assertj.core.groups.Tuple.tuple("one-endpoint", 5));
  }

  @Test
  void anUnknownFormatIsRefusedBeforeAnythingStarts() {
    LoadGenerator g = new LoadGenerator(new String[] {"--config-format", "toml",
        "--work-dir", dir.resolve("work").toString()});

    org.assertj.core.api.Assertions.assertThatThrownBy(g::run)
        .hasMessageContaining("--config-format yaml|json");
    assertThat(dir.resolve("work")).doesNotExist();
  }
}
