package dev.meridian.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.internal.server.MeridianServer;
import dev.meridian.testing.RawHttp;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.logging.LogManager;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code /logging} on a live server's admin port with the CLI's java.util.logging levels: what a
 * hostile client or web page sends there changes nothing.
 */
class AdminLoggingTest {
  @TempDir Path dir;

  private MeridianServer start() throws Exception {
    Path file = dir.resolve("m.yaml");
    Files.writeString(file, CliOpsTest.CONFIG);
    return new MeridianServer(new MeridianServer.Options(file, "127.0.0.1", 0, 0, 50))
        .logLevels(new Logging.JulLevels()).start();
  }

  @Test
  void aLoggerNameOutsideTheKnownSetIsRefusedAndNoLoggerIsCreatedForIt() throws Exception {
    try (MeridianServer server = start()) {
      int port = server.httpPort();
      String host = "Host: 127.0.0.1:" + port;
      String before = RawHttp.request(port, "GET", "/logging", host).body();
      for (int i = 0; i < 50; i++) {
        String name = "probe.logger" + i;
        RawHttp.Answer a = RawHttp.request(port, "POST",
            "/logging?level=debug&logger=" + name, host);
        assertThat(a.status()).as(name).isEqualTo(400);
        assertThat(a.body()).startsWith("unknown logger '" + name + "': use one of dev.meridian, ")
            .contains("dev.meridian.server.xds").contains("io.grpc");
        assertThat(LogManager.getLogManager().getLogger(name)).as(name).isNull();
      }
      assertThat(RawHttp.request(port, "GET", "/logging", host).body()).isEqualTo(before);

      // A known logger is set, as before.
      Logger netty = Logger.getLogger("io.netty");
      try {
        RawHttp.Answer a = RawHttp.request(port, "POST", "/logging?level=error&logger=io.netty",
            host);
        assertThat(a.status()).as(a.body()).isEqualTo(200);
        assertThat(a.body()).contains("io.netty error\n");
        assertThat(netty.getLevel()).isEqualTo(java.util.logging.Level.SEVERE);
      } finally {
        netty.setLevel(null);
      }
    }
  }

  @Test
  void aLevelChangePostedByAPageOfAnotherOriginIsForbiddenAndChangesNothing() throws Exception {
    Logger meridian = Logger.getLogger("dev.meridian");
    java.util.logging.Level level = meridian.getLevel();
    try (MeridianServer server = start()) {
      int port = server.httpPort();
      String host = "Host: 127.0.0.1:" + port;
      String before = RawHttp.request(port, "GET", "/logging", host).body();
      RawHttp.Answer csrf = RawHttp.request(port, "POST", "/logging?level=debug", host,
          "Origin: http://attacker.example", "Sec-Fetch-Site: cross-site");
      assertThat(csrf.status()).as(csrf.body()).isEqualTo(403);
      RawHttp.Answer rebound = RawHttp.request(port, "POST", "/logging?level=debug",
          "Host: attacker.example:" + port, "Origin: http://attacker.example:" + port);
      assertThat(rebound.status()).as(rebound.body()).isEqualTo(421);
      assertThat(RawHttp.request(port, "GET", "/logging", host).body()).isEqualTo(before);
      assertThat(meridian.getLevel()).isEqualTo(level);
    } finally {
      meridian.setLevel(level);
    }
  }
}
