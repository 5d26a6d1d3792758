package dev.meridian.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import dev.meridian.internal.server.Bounds;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class ServeCommandTest {
  @TempDir Path dir;

  @Test
  void invalidConfigMakesServeExitNonZeroWithTheProblem() throws Exception {
    Path bad = dir.resolve("bad.yaml");
    Files.writeString(bad, "resources:\n  - { \"@type\": type.googleapis.com/envoy.config.cluster.v3.Cluster }\n");
    PrintStream err = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setErr(new PrintStream(captured, true));
    int code;
    try {
      code = Main.run("serve", "--config", bad.toString(), "--xds-port", "0", "--http-port", "0",
          "--bind", "127.0.0.1");
    } finally {
      System.setErr(err);
    }
    assertThat(code).isEqualTo(2);
    assertThat(captured.toString()).contains("invalid config").contains("bad.yaml:2")
        .contains("missing 'name'");
  }

  /** --fleet stays: the launcher reads it (its JVM flags) and passes it on; serve accepts it. */
  @Test
  void fleetIsAccepted() {
    ServeCommand serve = new ServeCommand();
    new CommandLine(serve).parseArgs("--config", "x.yaml", "--fleet");
    assertThat(serve.fleet).isTrue();
  }

  /** Issue 21: the replica's name in every response; absent, the server picks meridian@host. */
  @Test
  void controlPlaneIdIsReadAndDefaultsToTheServersChoice() {
    ServeCommand named = new ServeCommand();
    new CommandLine(named).parseArgs("--config", "x.yaml", "--control-plane-id", "replica-a");
    assertThat(named.controlPlaneId).isEqualTo("replica-a");
    ServeCommand unnamed = new ServeCommand();
    new CommandLine(unnamed).parseArgs("--config", "x.yaml");
    assertThat(unnamed.controlPlaneId).isNull(); // MeridianServer: meridian@<host name>
  }

  /** Issue 26: --authority is repeatable; without it, every authority in the config. */
  @Test
  void authorityIsRepeatableAndDefaultsToEveryAuthority() {
    ServeCommand named = new ServeCommand();
    new CommandLine(named).parseArgs("--config", "x.yaml", "--authority", "a.example",
        "--authority", "b.example");
    assertThat(named.authorities).containsExactly("a.example", "b.example");
    ServeCommand unnamed = new ServeCommand();
    new CommandLine(unnamed).parseArgs("--config", "x.yaml");
    assertThat(unnamed.authorities).isEmpty();
  }

  /** Issue 25: every bound has a flag; without them, the server's defaults. */
  @Test
  void boundsFlagsAreReadAndDefaultToTheServersDefaults() {
    ServeCommand byDefault = new ServeCommand();
    new CommandLine(byDefault).parseArgs("--config", "x.yaml");
    assertThat(byDefault.bounds()).isEqualTo(Bounds.DEFAULT);
    ServeCommand set = new ServeCommand();
    new CommandLine(set).parseArgs("--config", "x.yaml", "--max-streams", "7",
        "--max-streams-per-connection", "3", "--max-request-rate", "5", "--max-request-bytes",
        "1024", "--max-stream-resets", "9", "--http-threads", "2", "--http-queue", "0",
        "--http-request-timeout", "2s", "--max-rest-long-polls", "11",
        "--handshake-timeout", "3s", "--max-connections", "500", "--max-connections-per-peer",
        "20", "--max-streams-per-peer", "4", "--message-receive-timeout", "5s",
        "--max-partial-bytes", "100000000", "--max-partial-bytes-per-connection", "2000000",
        "--max-resource-names", "13", "--max-request-memory", "4096");
    assertThat(set.bounds()).isEqualTo(new Bounds(7, 3, 5, 1024, 9, 2, 0, Duration.ofSeconds(2),
        11, Duration.ofSeconds(3), 500, 20, 4, Duration.ofSeconds(5), 100_000_000L, 2_000_000L,
        13, 4096));
  }

  @Test
  void boundOutOfRangeIsAUsageError() {
    PrintStream err = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setErr(new PrintStream(captured, true));
    int code;
    try {
      code = Main.run("serve", "--config", dir.resolve("none.yaml").toString(), "--max-streams",
          "0");
    } finally {
      System.setErr(err);
    }
    assertThat(code).isEqualTo(2);
    assertThat(captured.toString()).contains("max streams must be at least 1");
  }

  @Test
  void missingConfigFlagIsAUsageError() {
    assertThat(Main.run("serve")).isEqualTo(2);
  }
}
