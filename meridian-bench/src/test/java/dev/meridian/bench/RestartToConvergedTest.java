package dev.meridian.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The load generator's restart-to-converged mode (issue 18, "A 20-second start"), small: the
 * clients start first and retry, the real launcher starts {@code serve} on the fleet's YAML file,
 * and every client reaches every cluster and endpoint set, SotW and Delta, with and without
 * {@code --fleet}, and over mTLS ({@code --tls true}).
 */
class RestartToConvergedTest {
  @TempDir Path dir;

  @ParameterizedTest(name = "{0} {1} --tls {2}")
  @CsvSource({"sotw, '', false", "delta, '', false", "sotw, --fleet, false", "delta, --fleet, false",
      "delta, '', true"})
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  void everyClientStartedBeforeTheServerConverges(String variant, String serveArgs, boolean tls)
      throws Exception {
    Path launcher = RealLauncher.in(dir);
    Path work = dir.resolve("work");

    List<LoadGenerator.Result> results = new LoadGenerator(new String[] {
        "--event", "restart", "--clients", "5", "--clusters", "20", "--variant", variant,
        "--meridian-args", serveArgs, "--launcher", launcher.toString(), "--tls", "" + tls,
        "--generator-warmup", "false", "--server-jvm", "", "--client-transport", "nio",
        "--settle-ms", "200", "--timeout", "120", "--work-dir", work.toString()}).run();

    assertThat(results).hasSize(1);
    LoadGenerator.Result r = results.get(0);
    assertThat(r.reached()).isEqualTo(5);
    assertThat(r.mismatches()).isZero();
    assertThat(r.latencyMs().min()).isPositive();
    assertThat(r.server()).isEqualTo(("./meridian serve " + serveArgs).trim() + " (yaml)");
    assertThat(r.transport()).isEqualTo(LoadGenerator.transport(tls));
    String log;
    try (var files = Files.list(work)) {
      Path serverLog = files.filter(p -> p.getFileName().toString().startsWith("server-"))
          .findFirst().orElseThrow();
      log = Files.readString(serverLog);
    }
    assertThat(log).contains("path=" + work.resolve("fleet-20.yaml")); // a YAML file, as users write
    assertThat(log).doesNotContain("warmup"); // no startup warm-up, with or without --fleet
    if (tls) {
      assertThat(log.lines().filter(l -> l.contains("stream_open")
          && l.contains("identity=" + BenchTls.CLIENT_IDENTITY))).hasSize(5);
    }
  }
}
