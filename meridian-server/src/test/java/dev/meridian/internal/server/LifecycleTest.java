package dev.meridian.internal.server;

import static dev.meridian.xds.ResourceType.CLUSTER;
import static dev.meridian.xds.ResourceType.LISTENER;
import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.testing.ConfigFiles;
import dev.meridian.testing.RawXdsClient;
import io.grpc.Status;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Shutdown with connected clients, max connection age, and the structured log lines (issue 9). */
class LifecycleTest {
  @TempDir Path dir;

  @Test
  void gracefulShutdownEndsConnectedStreamsWithUnavailableWithinTheBound() throws Exception {
    OpsFixture f = new OpsFixture(dir, o -> o.withShutdownTimeout(Duration.ofSeconds(5)));
    try {
      RawXdsClient.Sotw a = f.ads("envoy-a", "edge");
      RawXdsClient.Sotw b = f.ads("envoy-b", "edge");
      a.ack(a.subscribe(CLUSTER));
      b.subscribe(LISTENER); // left un-ACKed: shutdown does not wait for an ACK
      long started = System.nanoTime();
      f.server.close();
      long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
      // Streams are ended by the server, not cut by the deadline: well under the 5s bound.
      assertThat(tookMs).isLessThan(4000);
      assertThat(a.closed().get(5, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(b.closed().get(5, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(b.closed().get().getDescription()).isEqualTo("server shutting down");
      assertThat(f.server.isClosing()).isTrue();
      f.server.awaitTermination(); // returns: close() is done
    } finally {
      f.close(); // idempotent
    }
  }

  @Test
  void readinessDropsAsSoonAsShutdownStarts() throws Exception {
    OpsFixture f = new OpsFixture(dir);
    try {
      assertThat(f.get("/readyz").statusCode()).isEqualTo(200);
      assertThat(f.server.isReady()).isTrue();
      RawXdsClient.Sotw a = f.ads("envoy-a", "edge");
      a.ack(a.subscribe(CLUSTER));
      Thread closer = new Thread(f.server::close);
      closer.start();
      OpsFixture.await("closing", f.server::isClosing);
      assertThat(f.server.isReady()).isFalse(); // /readyz answers 503 from here on
      closer.join(10_000);
      assertThat(closer.isAlive()).isFalse();
      assertThat(a.closed().get(5, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    } finally {
      f.close();
    }
  }

  @Test
  void maxConnectionAgeEndsStreamsSoClientsRebalance() throws Exception {
    OpsFixture f = new OpsFixture(dir,
        o -> o.withMaxConnectionAge(Duration.ofMillis(500), Duration.ofMillis(500)));
    try {
      RawXdsClient.Sotw a = f.ads("envoy-a", "edge");
      a.ack(a.subscribe(CLUSTER));
      // GOAWAY after ~0.5s (+ jitter), the stream is cut after the 0.5s grace; the client sees
      // UNAVAILABLE and reconnects (to another replica, behind a load balancer).
      Status s = a.closed().get(10, TimeUnit.SECONDS);
      assertThat(s.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    } finally {
      f.close();
    }
  }

  @Test
  void logsOneLinePerStreamOpenNackCloseAndReload() throws Exception {
    List<String> lines = new ArrayList<>();
    Handler h = new Handler() {
      @Override public void publish(LogRecord r) {
        synchronized (lines) {
          lines.add(r.getLevel() + " " + r.getMessage());
        }
      }

      @Override public void flush() {}

      @Override public void close() {}
    };
    Logger server = Logger.getLogger("dev.meridian.server");
    Level before = server.getLevel();
    server.setLevel(Level.INFO);
    server.addHandler(h);
    OpsFixture f = new OpsFixture(dir);
    try {
      RawXdsClient.Sotw a = f.ads("envoy-a", "edge");
      a.ack(a.subscribe(CLUSTER));
      a.nack(a.subscribe(LISTENER), "", "bad \"listener\"\nsecond line");
      f.reload(OpsFixture.config("4s"));
      a.close();
      OpsFixture.await("stream_close logged", () -> snapshot(lines).stream()
          .anyMatch(l -> l.contains("stream_close")));
    } finally {
      f.close();
      server.removeHandler(h);
      server.setLevel(before);
    }
    List<String> got = snapshot(lines);
    assertThat(got).anySatisfy(l -> assertThat(l).startsWith("INFO config_load result=ok"));
    assertThat(got).anySatisfy(l -> assertThat(l)
        .startsWith("INFO stream_open stream=").contains(" node=envoy-a cluster=edge group=default ")
        .contains(" peer=127.0.0.1:").contains(" variant=sotw "));
    assertThat(got).anySatisfy(l -> assertThat(l).startsWith("WARNING nack stream=")
        .contains(" node=envoy-a ").contains(" type=LDS ")
        .endsWith(" message=\"bad \\\"listener\\\"\\nsecond line\""));
    assertThat(got).anySatisfy(l -> assertThat(l).startsWith("INFO config_reload result=ok"));
    assertThat(got).anySatisfy(l -> assertThat(l).startsWith("INFO stream_close stream=")
        .contains(" node=envoy-a ").contains(" reason=\"client closed\""));
    assertThat(got).allSatisfy(l -> assertThat(l).doesNotContain("\n"));
  }

  /**
   * Issue 18: serve says so when a config it loads has no resources at all, at start and on
   * reload (a reload that empties what is served is applied only with --allow-emptying).
   */
  @Test
  void logsAWarningWhenALoadedConfigHasNoResourcesAtAll() throws Exception {
    List<String> lines = new ArrayList<>();
    Handler h = new Handler() {
      @Override public void publish(LogRecord r) {
        synchronized (lines) {
          lines.add(r.getLevel() + " " + new java.util.logging.SimpleFormatter().formatMessage(r));
        }
      }

      @Override public void flush() {}

      @Override public void close() {}
    };
    Logger logger = Logger.getLogger("dev.meridian.server");
    logger.addHandler(h);
    Path file = dir.resolve("empty.yaml");
    java.nio.file.Files.writeString(file, "resources: []\n");
    String warning = "WARNING empty config: no resources at all";
    try (MeridianServer server = new MeridianServer(
        new MeridianServer.Options(file, "127.0.0.1", 0, 0, 50).withAllowEmptying(true))
        .start()) {
      assertThat(snapshot(lines)).filteredOn(l -> l.startsWith(warning)).hasSize(1);
      ConfigFiles.replaceByRename(file, OpsFixture.config("1s"));
      OpsFixture.await("the full config loaded", () -> server.hub().current().defaults().size() > 0);
      assertThat(snapshot(lines)).filteredOn(l -> l.startsWith(warning)).hasSize(1);
      ConfigFiles.replaceByRename(file, "resources: []\n");
      OpsFixture.await("the empty config's warning", () -> snapshot(lines).stream()
          .filter(l -> l.startsWith(warning)).count() == 2);
    } finally {
      logger.removeHandler(h);
    }
  }

  /**
   * A config directory's subdirectory is not read: serve says so at start, and when one appears
   * later, at the next reload, once; config_load names the files it read.
   */
  @Test
  void aSubdirectoryOfAConfigDirectoryIsWarnedAboutOnceAndConfigLoadNamesTheFilesRead()
      throws Exception {
    List<String> lines = new ArrayList<>();
    Handler h = new Handler() {
      @Override public void publish(LogRecord r) {
        synchronized (lines) {
          lines.add(r.getLevel() + " " + new java.util.logging.SimpleFormatter().formatMessage(r));
        }
      }

      @Override public void flush() {}

      @Override public void close() {}
    };
    Logger logger = Logger.getLogger("dev.meridian.server");
    Level before = logger.getLevel();
    logger.setLevel(Level.INFO);
    logger.addHandler(h);
    Path conf = java.nio.file.Files.createDirectory(dir.resolve("conf.d"));
    Path a = java.nio.file.Files.writeString(conf.resolve("a.yaml"), OpsFixture.config("1s"));
    java.nio.file.Files.writeString(conf.resolve("README.md"), "# not config\n");
    String warning = "WARNING config_not_read path=" + conf.resolve("sub")
        + " reason=\"a subdirectory, not read: a config directory's own files are read, not its"
        + " subdirectories'; it holds sub/x.yaml\"";
    try (MeridianServer server = new MeridianServer(
        new MeridianServer.Options(conf, "127.0.0.1", 0, 0, 50)).start()) {
      assertThat(snapshot(lines)).anySatisfy(l -> assertThat(l)
          .isEqualTo("INFO config_load result=ok resources=4 groups=1 path=" + conf
              + " files=1 read=a.yaml"));
      assertThat(snapshot(lines)).noneSatisfy(l -> assertThat(l).contains("config_not_read"));
      java.nio.file.Files.createDirectory(conf.resolve("sub"));
      java.nio.file.Files.writeString(conf.resolve("sub/x.yaml"), "resources: [ broken\n");
      for (String timeout : List.of("2s", "3s")) {
        long reloads = snapshot(lines).stream().filter(l -> l.contains("config_reload")).count();
        ConfigFiles.replaceByRename(a, OpsFixture.config(timeout));
        OpsFixture.await("a reload", () -> snapshot(lines).stream()
            .filter(l -> l.contains("config_reload result=ok")).count() > reloads);
        assertThat(snapshot(lines)).filteredOn(l -> l.startsWith(warning)).hasSize(1);
      }
    } finally {
      logger.removeHandler(h);
      logger.setLevel(before);
    }
  }

  private static List<String> snapshot(List<String> lines) {
    synchronized (lines) {
      return new ArrayList<>(lines);
    }
  }
}
