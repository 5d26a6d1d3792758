package dev.meridian.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Every command that reads xDS documents {@code --max-response-bytes} and its exit statuses. */
class ReadCommandsHelpTest {
  private String help(String command) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    assertThat(LargeFleetTest.run(out, err, command, "--help")).isZero();
    return out.toString(StandardCharsets.UTF_8).replaceAll("\\s+", " "); // as wrapped or not
  }

  @Test
  void getWatchResolveAndStatusListMaxResponseBytesAndTheirExitStatuses() {
    for (String command : new String[] {"get", "watch", "resolve", "status"}) {
      assertThat(help(command)).as(command)
          .contains("--max-response-bytes=BYTES")
          .contains("(default 256MiB)")
          .contains("Exit status:")
          .contains("exceeds --max-response-bytes");
    }
  }
}
