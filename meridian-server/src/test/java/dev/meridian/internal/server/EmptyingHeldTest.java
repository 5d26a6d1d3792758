package dev.meridian.internal.server;

import static dev.meridian.internal.server.OpsFixture.await;
import static dev.meridian.xds.ResourceType.CLUSTER;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.testing.ConfigFiles;
import dev.meridian.testing.RawXdsClient;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a trial found: {@code : > config.yaml} was served as an empty config a second later, and
 * after a rejected reload, putting the good file back was never acknowledged. Here a reload that
 * would empty what is served is held (the last good config stays, the hold is logged, counted and
 * shown), and going back to the served content is acknowledged as recovered. Real files, the
 * watcher's own thread and real xDS clients.
 */
class EmptyingHeldTest {
  @TempDir Path dir;
  final List<String> lines = new ArrayList<>();
  final Logger meridian = Logger.getLogger("dev.meridian");
  final Handler capture = new Handler() {
    @Override public void publish(LogRecord r) {
      synchronized (lines) {
        lines.add(r.getLevel() + " " + new SimpleFormatter().formatMessage(r));
      }
    }

    @Override public void flush() {}

    @Override public void close() {}
  };

  /** Its level, set by no test or by another of this JVM: the INFO lines are wanted here. */
  final Logger server = Logger.getLogger("dev.meridian.server");
  java.util.logging.Level meridianLevel;
  java.util.logging.Level serverLevel;

  @BeforeEach
  void captureLogs() {
    meridian.addHandler(capture);
    meridianLevel = meridian.getLevel();
    serverLevel = server.getLevel();
    meridian.setLevel(java.util.logging.Level.INFO);
    server.setLevel(java.util.logging.Level.INFO);
  }

  @AfterEach
  void stopCapturing() {
    meridian.removeHandler(capture);
    meridian.setLevel(meridianLevel);
    server.setLevel(serverLevel);
  }

  List<String> logged(String prefix) {
    synchronized (lines) {
      return lines.stream().filter(l -> l.startsWith(prefix)).toList();
    }
  }

  static String lastResult(OpsFixture f) {
    ReloadStatus.Reload r = f.server.hub().reloads().last();
    return r == null ? null : r.result().label();
  }

  static int served(OpsFixture f) {
    return f.server.hub().current().resourceCount();
  }

  @Test
  void aTruncatedConfigFileIsHeldAndTheLastGoodConfigKeepsBeingServed() throws Exception {
    try (OpsFixture f = new OpsFixture(dir);
         RawXdsClient.Sotw envoy = f.ads("envoy-a", "edge")) {
      envoy.ack(envoy.subscribe(CLUSTER));
      ServedConfig before = f.server.hub().current();

      Files.write(f.file, new byte[0]); // : > meridian.yaml
      await("the reload held", () -> "held".equals(lastResult(f)));

      assertThat(f.server.hub().current()).as("the last good config").isSameAs(before);
      envoy.expectNoResponse();
      assertThat(f.get("/config_dump?type=CDS").body()).contains("greeter-v1", "greeter-v2");
      JsonObject s = f.getJson("/status");
      assertThat(s.get("config_state").getAsString()).isEqualTo("held");
      JsonObject held = s.getAsJsonObject("last_held_reload");
      assertThat(s.getAsJsonObject("last_reload")).isEqualTo(held);
      assertThat(held.get("result").getAsString()).isEqualTo("held");
      assertThat(held.getAsJsonArray("removes").toString()).contains(
          "the whole config: all 4 resources", "CDS: all 2 (greeter-v1, greeter-v2)",
          "file meridian.yaml: emptied");
      assertThat(s.get("last_failed_reload").isJsonNull()).isTrue();
      assertThat(f.get("/metrics").body()).contains(
          "meridian_config_reloads_total{result=\"held\"} 1.0",
          "meridian_config_state{state=\"held\"} 1.0", "meridian_config_state{state=\"ok\"} 0.0");
      assertThat(logged("SEVERE config_reload result=held")).singleElement().asString()
          .startsWith("SEVERE config_reload result=held reason=emptying removes=\"the whole "
              + "config: all 4 resources; CDS: all 2 (greeter-v1, greeter-v2);")
          .contains("file meridian.yaml: emptied\" serving=\"last good config\"");
      assertThat(logged("WARNING config_emptying")).isEmpty();
    }
  }

  @Test
  void restoringTheServedFileAfterAFailedReloadIsAcknowledgedAsRecovered() throws Exception {
    try (OpsFixture f = new OpsFixture(dir)) {
      ServedConfig before = f.server.hub().current();
      ConfigFiles.replaceByRename(f.file, "resources: [ {");
      await("the reload rejected", () -> "failed".equals(lastResult(f)));
      assertThat(f.getJson("/status").get("config_state").getAsString()).isEqualTo("failed");

      ConfigFiles.replaceByRename(f.file, OpsFixture.config("1s")); // what is served
      await("the recovery acknowledged", () -> "recovered".equals(lastResult(f)));

      assertThat(f.server.hub().current()).as("nothing to apply").isSameAs(before);
      JsonObject s = f.getJson("/status");
      assertThat(s.get("config_state").getAsString()).isEqualTo("ok");
      assertThat(s.getAsJsonObject("last_reload").get("result").getAsString())
          .isEqualTo("recovered");
      assertThat(s.getAsJsonObject("last_failed_reload").get("result").getAsString())
          .as("kept for the record").isEqualTo("failed");
      assertThat(f.get("/metrics").body()).contains("meridian_config_state{state=\"ok\"} 1.0",
          "meridian_config_state{state=\"failed\"} 0.0");
      assertThat(logged("INFO config_reload result=recovered")).singleElement().asString()
          .startsWith("INFO config_reload result=recovered was=failed");
    }
  }

  @Test
  void restoringATruncatedFileIsAcknowledgedAsRecovered() throws Exception {
    try (OpsFixture f = new OpsFixture(dir)) {
      Files.write(f.file, new byte[0]);
      await("the reload held", () -> "held".equals(lastResult(f)));
      Files.writeString(f.file, OpsFixture.config("1s")); // written back in place

      await("the recovery acknowledged", () -> "recovered".equals(lastResult(f)));
      JsonObject s = f.getJson("/status");
      assertThat(s.get("config_state").getAsString()).isEqualTo("ok");
      assertThat(s.getAsJsonObject("last_held_reload").get("result").getAsString())
          .isEqualTo("held");
      assertThat(logged("INFO config_reload result=recovered")).singleElement().asString()
          .startsWith("INFO config_reload result=recovered was=held");
      assertThat(served(f)).isEqualTo(4);
    }
  }

  /** The default resources and a canary group, each with a listener and perhaps a cluster. */
  static String twoGroups(boolean defaultCluster, boolean canaryCluster) {
    return "resources:\n" + (defaultCluster ? cluster("    ", "web") : "") + listener("    ", "http")
        + "groups:\n  - name: canary\n    match: { node_id: \"canary-*\" }\n    resources:\n"
        + (canaryCluster ? cluster("      ", "web-canary") : "") + listener("      ", "http-canary");
  }

  static String cluster(String indent, String name) {
    return indent.substring(2) + "- { \"@type\": type.googleapis.com/envoy.config.cluster.v3.Cluster, "
        + "name: " + name + ", connect_timeout: 1s }\n";
  }

  static String listener(String indent, String name) {
    return indent.substring(2) + "- { \"@type\": type.googleapis.com/envoy.config.listener.v3.Listener, "
        + "name: " + name + ", address: { socket_address: { address: 0.0.0.0, port_value: 10000 } } }\n";
  }

  @Test
  void aTypeEmptiedInAGroupWhoseConnectedClientsSubscribeToItIsHeld() throws Exception {
    try (OpsFixture f = new OpsFixture(dir)) {
      f.reload(twoGroups(true, true));
      try (RawXdsClient.Sotw edge = f.ads("edge-1", "edge")) {
        DiscoveryResponse r = edge.subscribe(CLUSTER);
        assertThat(r.getResourcesCount()).isEqualTo(1);
        edge.ack(r);
        ConfigFiles.replaceByRename(f.file, twoGroups(false, true));
        await("the reload held", () -> "held".equals(lastResult(f)));
        edge.expectNoResponse();
        assertThat(f.server.hub().reloads().lastHeld().removes())
            .containsExactly("group default CDS: all 1 (web)");
        assertThat(f.server.hub().current().defaults().get(CLUSTER).get("web")).isNotNull();
      }
    }
  }

  @Test
  void aGroupWithNoConnectedClientMayLoseATypeWithoutHolding() throws Exception {
    try (OpsFixture f = new OpsFixture(dir)) {
      f.reload(twoGroups(true, true));
      // A client of the other group, subscribed to clusters: it is not the canary group's.
      try (RawXdsClient.Sotw edge = f.ads("edge-1", "edge")) {
        edge.ack(edge.subscribe(CLUSTER));
        synchronized (lines) {
          lines.clear(); // the lines of the reload to two groups (it emptied EDS)
        }
        f.reload(twoGroups(true, false));
        assertThat(lastResult(f)).isEqualTo("ok");
        assertThat(f.server.hub().current().snapshot("canary").get(CLUSTER).size()).isZero();
        assertThat(logged("WARNING config_emptying")).singleElement().asString().matches(
            "WARNING config_emptying removes=\"group canary CDS: all 1 \\(web-canary\\)\" "
                + "stable_ms=1\\d\\d\\d because=\"no client subscribes to it\"");
        edge.expectNoResponse(); // nothing of its group changed
      }
    }
  }

  @Test
  void withAllowEmptyingATruncatedFileIsAppliedAfterOneSecondOfStability() throws Exception {
    try (OpsFixture f = new OpsFixture(dir, o -> o.withAllowEmptying(true));
         RawXdsClient.Sotw envoy = f.ads("envoy-a", "edge")) {
      envoy.ack(envoy.subscribe(CLUSTER));
      long truncated = System.nanoTime();
      Files.write(f.file, new byte[0]);
      DiscoveryResponse emptied = envoy.take(CLUSTER);
      long millis = (System.nanoTime() - truncated) / 1_000_000;
      assertThat(emptied.getResourcesList()).isEmpty();
      assertThat(millis).as("stable for a second first").isGreaterThanOrEqualTo(1000);
      await("reported", () -> "ok".equals(lastResult(f)) && served(f) == 0);
      assertThat(logged("WARNING config_emptying")).singleElement().asString()
          .startsWith("WARNING config_emptying removes=\"the whole config: all 4 resources;")
          .endsWith("because=--allow-emptying");
      assertThat(logged("SEVERE config_reload")).isEmpty();
    }
  }

  /**
   * A fresh install with an empty file starts, serving nothing (starting empty removes nothing:
   * nothing was served); once the file has been filled, emptying it again is held.
   */
  @Test
  void anEmptyFileAtFirstStartIsServedAndEmptyingItOnceFilledIsHeld() throws Exception {
    Path file = dir.resolve("meridian.yaml");
    Files.write(file, new byte[0]);
    try (MeridianServer server = new MeridianServer(
        new MeridianServer.Options(file, "127.0.0.1", 0, 0, 50)).start()) {
      assertThat(server.isReady()).isTrue();
      assertThat(server.hub().current().resourceCount()).isZero();
      assertThat(server.hub().reloads().state()).isEqualTo(ReloadStatus.Result.OK);
      assertThat(logged("WARNING empty config: no resources at all")).hasSize(1);

      ConfigFiles.replaceByRename(file, OpsFixture.config("1s"));
      await("filled", () -> server.hub().current().resourceCount() == 4);
      Files.write(file, new byte[0]);
      await("the reload held", () -> server.hub().reloads().state() == ReloadStatus.Result.HELD);
      assertThat(server.hub().current().resourceCount()).isEqualTo(4);
    }
  }

  @Test
  void aDirectoryWhoseFilesAreAllDeletedIsHeld() throws Exception {
    Path conf = Files.createDirectory(dir.resolve("conf.d"));
    String config = OpsFixture.config("1s");
    int split = config.indexOf("  - \"@type\": type.googleapis.com/envoy.config.endpoint");
    Files.writeString(conf.resolve("clusters.yaml"), config.substring(0, split));
    Files.writeString(conf.resolve("rest.yaml"), "resources:\n" + config.substring(split));
    try (MeridianServer server = new MeridianServer(
        new MeridianServer.Options(conf, "127.0.0.1", 0, 0, 50)).start()) {
      assertThat(server.hub().current().resourceCount()).isEqualTo(4);
      Files.delete(conf.resolve("clusters.yaml"));
      Files.delete(conf.resolve("rest.yaml"));
      await("the reload held", () -> server.hub().reloads().state() == ReloadStatus.Result.HELD);
      assertThat(server.hub().current().resourceCount()).isEqualTo(4);
      assertThat(server.hub().reloads().lastHeld().removes()).contains(
          "the whole config: all 4 resources", "file clusters.yaml: removed",
          "file rest.yaml: removed");
    }
  }
}
