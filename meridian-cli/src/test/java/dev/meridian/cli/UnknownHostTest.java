package dev.meridian.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * A client command pointed at a host that does not resolve says so in one line: gRPC's own
 * warning about it, with its stack trace, shows only with {@code --log-level debug}. The log
 * handler writes to {@code System.err} as it is when the command starts, so each run captures it
 * there, the command's own lines included.
 */
class UnknownHostTest {
  /** RFC 6761: names under .invalid never resolve. */
  static final String NOWHERE = "no-such-host.invalid:18000";

  private record Run(int code, String stderr) {}

  private static Run get(String... args) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream captured = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    PrintStream was = System.err;
    System.setErr(captured);
    try {
      int code = new picocli.CommandLine(new GetCommand(System.out, captured)).execute(args);
      return new Run(code, bytes.toString(StandardCharsets.UTF_8));
    } finally {
      System.setErr(was);
    }
  }

  private static Run status(String... args) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream captured = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    PrintStream was = System.err;
    System.setErr(captured);
    try {
      int code = Main.commandLine().setErr(new PrintWriter(captured, true)).execute(args);
      return new Run(code, bytes.toString(StandardCharsets.UTF_8));
    } finally {
      System.setErr(was);
    }
  }

  @Test
  void getFromAnUnknownHostIsOneLineWithoutAStackTrace() {
    Run r = get("clusters", "--server", NOWHERE, "--timeout", "10s");
    assertThat(r.code).isEqualTo(GetCommand.UNREACHABLE);
    assertThat(r.stderr)
        .isEqualTo("meridian get: cannot get clusters: unknown host in " + NOWHERE + "\n");
  }

  @Test
  void statusOfAnUnknownHostIsOneLineWithoutAStackTrace() {
    Run r = status("status", "--server", NOWHERE, "--timeout", "10s");
    assertThat(r.code).isEqualTo(3);
    assertThat(r.stderr).isEqualTo("meridian status: unknown host in " + NOWHERE + "\n");
  }

  @Test
  void withLogLevelDebugTheLibrarysOwnWarningIsShownToo() {
    Run r = get("clusters", "--server", NOWHERE, "--timeout", "10s", "--log-level", "debug");
    assertThat(r.code).isEqualTo(GetCommand.UNREACHABLE);
    assertThat(r.stderr).contains("io.grpc").contains("UnknownHostException")
        .contains("meridian get: cannot get clusters: unknown host in " + NOWHERE + "\n");
  }
}
