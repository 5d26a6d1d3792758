package dev.meridian.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code meridian serve} on a port another process holds: the error names the address, the flag
 * and what to do, and comes before the config is loaded (no {@code config_load} or
 * {@code shutdown} line that reads as a server that started).
 */
class BusyPortsTest {
  @TempDir Path dir;

  @Test
  void aBusyXdsPortIsNamedWithItsFlagBeforeTheConfigIsLoaded() throws Exception {
    try (ServerSocket held = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      int port = held.getLocalPort();
      Result r = serve("--xds-port", Integer.toString(port), "--http-port", "0");
      assertThat(r.code).as(r.output).isEqualTo(3);
      assertThat(r.output).contains("meridian: cannot listen on 127.0.0.1:" + port
          + " (--xds-port " + port + "): the address is already in use: another process listens"
          + " on it; stop it, or choose another port with --xds-port (0: any free port)");
      assertThat(r.output).doesNotContain("config_load").doesNotContain("shutdown");
    }
  }

  @Test
  void aBusyAdminPortIsNamedWithItsFlagBeforeTheConfigIsLoaded() throws Exception {
    try (ServerSocket held = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      int port = held.getLocalPort();
      Result r = serve("--xds-port", "0", "--http-port", Integer.toString(port));
      assertThat(r.code).as(r.output).isEqualTo(3);
      assertThat(r.output).contains("meridian: cannot listen on 127.0.0.1:" + port
          + " (--http-port " + port + "): the address is already in use")
          .contains("choose another port with --http-port");
      assertThat(r.output).doesNotContain("config_load").doesNotContain("shutdown");
    }
  }

  @Test
  void twoPortsGivenOneNumberAreNamedBothBeforeTheConfigIsLoaded() throws Exception {
    int port;
    try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = free.getLocalPort();
    }
    Result r = serve("--xds-port", Integer.toString(port), "--http-port", "0", "--rest-port",
        Integer.toString(port));
    assertThat(r.code).as(r.output).isEqualTo(3);
    assertThat(r.output).contains("meridian: cannot listen on 127.0.0.1:" + port
        + " (--rest-port " + port + "): --xds-port is " + port + " too, on 127.0.0.1:" + port
        + "; give each port a number of its own");
    assertThat(r.output).doesNotContain("config_load");
  }

  @Test
  void anAddressOfAnotherMachineIsNamedWithTheBindFlag() throws Exception {
    // TEST-NET-1 (RFC 5737): never an address of this machine.
    Result r = serve("--xds-port", "0", "--http-port", "0", "--bind", "192.0.2.1");
    assertThat(r.code).as(r.output).isEqualTo(3);
    assertThat(r.output).contains("meridian: cannot listen on 192.0.2.1:0 (--bind 192.0.2.1): "
        + "192.0.2.1 is not an address of this machine; give one of its addresses with --bind "
        + "(0.0.0.0: all of them)");
    assertThat(r.output).doesNotContain("config_load");
  }

  private record Result(int code, String output) {}

  /** {@code meridian serve} on a valid config, in a process of its own, stderr into stdout. */
  private Result serve(String... flags) throws Exception {
    Path file = dir.resolve("m.yaml");
    Files.writeString(file, CliOpsTest.CONFIG);
    List<String> cmd = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), Main.class.getName(), "serve",
        "--config", file.toString()));
    cmd.addAll(List.of(flags));
    if (!cmd.contains("--bind")) {
      cmd.addAll(List.of("--bind", "127.0.0.1"));
    }
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    // A start that fails ends on its own (its few lines fit the pipe); one that serves is ended
    // here, and its exit status is then not 3.
    boolean ended = p.waitFor(30, TimeUnit.SECONDS);
    if (!ended) {
      p.destroyForcibly().waitFor();
    }
    return new Result(p.exitValue(),
        new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
  }
}
