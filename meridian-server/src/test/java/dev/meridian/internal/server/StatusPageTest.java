package dev.meridian.internal.server;

import static dev.meridian.xds.ResourceType.LISTENER;
import static dev.meridian.internal.server.OpsFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import dev.meridian.testing.ConfigFiles;
import dev.meridian.testing.RawXdsClient;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The status page's resources and its {@code /status} JSON over plain HTTP (issue 24). */
class StatusPageTest {
  @TempDir Path dir;
  OpsFixture f;

  @BeforeEach
  void start() throws Exception {
    f = new OpsFixture(dir);
  }

  @AfterEach
  void stop() throws Exception {
    f.close();
  }

  @Test
  void slashIsThePageFromTheJarWithAStrictPolicyAndOtherUnknownPathsStay404() throws Exception {
    HttpResponse<String> page = f.get("/");
    assertThat(page.statusCode()).isEqualTo(200);
    assertThat(page.headers().firstValue("Content-Type")).hasValue("text/html; charset=utf-8");
    assertThat(page.headers().firstValue("Cache-Control")).hasValue("no-store");
    String csp = page.headers().firstValue("Content-Security-Policy").orElseThrow();
    assertThat(csp).contains("default-src 'none'", "script-src 'self'", "connect-src 'self'",
        "style-src '" + StatusPage.styleHash(page.body()) + "'").doesNotContain("unsafe");
    assertThat(page.body()).contains("<script src=\"status.js\"></script>")
        .contains("href=\"config_dump\"", "href=\"clients\"", "href=\"metrics\"")
        // Relative links only: the page also works where the handler is mounted below a prefix.
        .doesNotContain("href=\"/", "src=\"/");
    HttpResponse<String> js = f.get("/status.js");
    assertThat(js.statusCode()).isEqualTo(200);
    assertThat(js.headers().firstValue("Content-Type")).hasValue("text/javascript; charset=utf-8");
    assertThat(js.body()).contains("getJson(\"status\")").doesNotContain("innerHTML");
    assertThat(f.get("/nope").statusCode()).isEqualTo(404);
    assertThat(f.get("/index.html").statusCode()).isEqualTo(404);
  }

  @Test
  void statusShowsGroupsCountsAndTheLastReloadAndTheLastRejectedOne() throws Exception {
    JsonObject s = f.getJson("/status");
    assertThat(s.get("control_plane").getAsString()).isNotEmpty();
    assertThat(s.get("ready").getAsBoolean()).isTrue();
    JsonObject group = s.getAsJsonArray("groups").get(0).getAsJsonObject();
    assertThat(group.get("name").getAsString()).isEqualTo("default");
    assertThat(group.getAsJsonObject("resources").toString())
        .isEqualTo("{\"CDS\":2,\"EDS\":1,\"LDS\":1}");
    assertThat(group.get("total").getAsInt()).isEqualTo(4);
    JsonObject first = s.getAsJsonObject("last_reload");
    assertThat(first.get("result").getAsString()).isEqualTo("ok");
    assertThat(first.get("changed").getAsInt()).isEqualTo(4);
    assertThat(s.get("last_failed_reload").isJsonNull()).isTrue();
    assertThat(s.get("config_source").isJsonNull()).isTrue();

    ConfigFiles.replaceByRename(f.file, "resources: [ {");
    await("rejected reload", () -> f.server.hub().reloads().lastFailure() != null);
    s = f.getJson("/status");
    JsonObject failed = s.getAsJsonObject("last_failed_reload");
    assertThat(failed.get("result").getAsString()).isEqualTo("failed");
    assertThat(failed.getAsJsonArray("errors")).isNotEmpty();
    assertThat(s.getAsJsonObject("last_reload")).isEqualTo(failed);

    f.reload(OpsFixture.config("2s"));
    s = f.getJson("/status");
    assertThat(s.getAsJsonObject("last_reload").get("result").getAsString()).isEqualTo("ok");
    assertThat(s.getAsJsonObject("last_reload").get("changed").getAsInt()).isEqualTo(1);
    assertThat(s.getAsJsonObject("last_failed_reload")).isEqualTo(failed);
  }

  /**
   * A load with warnings (serve's checks: here an EDS cluster without endpoints) shows them on
   * /status, for the load and for the config served, not just "ok"; a reload without them
   * clears them.
   */
  @Test
  void aLoadWithWarningsShowsThemOnStatusUntilAReloadWithoutThem() throws Exception {
    JsonObject s = f.getJson("/status");
    assertThat(s.get("config_state").getAsString()).isEqualTo("ok");
    assertThat(s.getAsJsonArray("warnings")).hasSize(1);
    assertThat(s.getAsJsonArray("warnings").get(0).getAsString())
        .startsWith("dangling reference: ").contains("greeter-v2");
    assertThat(s.getAsJsonObject("last_reload").getAsJsonArray("warnings"))
        .isEqualTo(s.getAsJsonArray("warnings"));

    f.reload(OpsFixture.config("1s") + """
          - "@type": type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment
            cluster_name: greeter-v2
        """);
    s = f.getJson("/status");
    assertThat(s.getAsJsonArray("warnings")).isEmpty();
    assertThat(s.getAsJsonObject("last_reload").getAsJsonArray("warnings")).isEmpty();
    assertThat(s.getAsJsonObject("last_reload").getAsJsonArray("removes")).isEmpty();
    assertThat(s.get("last_held_reload").isJsonNull()).isTrue();
  }

  @Test
  void nackMessagesAreInClientsForThePage() throws Exception {
    try (RawXdsClient.Sotw envoy = f.ads("envoy-a", "edge")) {
      envoy.nack(envoy.subscribe(LISTENER), "", "bad <b>filter</b>");
      await("nack", () -> {
        try {
          return f.get("/clients").body().contains("bad <b>filter</b>");
        } catch (Exception e) {
          throw new AssertionError(e);
        }
      });
    }
  }

  @Test
  void aPublishThatLeavesFilesNotCurrentShowsInStatusAndMetricsWhileXdsServesTheNewConfig()
      throws Exception {
    Path publish = dir.resolve("publish");
    Path elsewhere = Files.createDirectories(dir.resolve("elsewhere"));
    try (OpsFixture p = new OpsFixture(Files.createDirectories(dir.resolve("p")),
        o -> o.withPublish(publish, FilePublisher.Format.YAML))) {
      JsonObject ok = p.getJson("/status").getAsJsonObject("publish");
      assertThat(ok.get("dir").getAsString()).isEqualTo(publish.toString());
      assertThat(ok.get("result").getAsString()).isEqualTo("ok");
      assertThat(ok.getAsJsonArray("errors")).isEmpty();
      assertThat(p.get("/metrics").body()).contains("meridian_publish_failures_total 0");

      // The group's directory is swapped for a link: the next publish may not write through it.
      Path group = publish.resolve("default");
      try (var files = Files.list(group)) {
        for (Path f : files.toList()) {
          Files.delete(f);
        }
      }
      Files.delete(group);
      Files.createSymbolicLink(group, elsewhere);
      p.reload(OpsFixture.config("2s"));

      await("failed publish", () -> p.server.hub().publishes().last() != null
          && !p.server.hub().publishes().last().ok());
      JsonObject failed = p.getJson("/status").getAsJsonObject("publish");
      assertThat(failed.get("result").getAsString()).isEqualTo("failed");
      assertThat(failed.getAsJsonArray("errors").get(0).getAsString())
          .contains(group.toString(), "symbolic link");
      assertThat(p.get("/metrics").body()).contains("meridian_publish_failures_total 1");
      assertThat(p.getJson("/status").getAsJsonObject("last_reload").get("result").getAsString())
          .isEqualTo("ok"); // the reload itself was served
      try (var s = Files.list(elsewhere)) {
        assertThat(s.toList()).isEmpty();
      }

      Files.delete(group);
      p.reload(OpsFixture.config("3s"));
      await("publish ok again", () -> p.server.hub().publishes().last().ok());
      assertThat(publish.resolve("default").resolve("clusters.yaml")).content().contains("3s");
    }
  }
}
