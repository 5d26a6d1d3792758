package dev.meridian.internal.server;

import static dev.meridian.xds.ResourceType.CLUSTER;
import static dev.meridian.xds.ResourceType.LISTENER;
import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.meridian.server.Meridian;
import dev.meridian.testing.ConfigFiles;
import dev.meridian.testing.RawXdsClient;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.ExpectedConditions;

/**
 * The status page (issue 24) in a real headless chromium against a live server: it shows who is
 * connected and why a client NACKed, and follows changes without being reloaded. Needs Debian's
 * chromium and chromium-driver (see {@link HeadlessChromium}); fails without them.
 */
class StatusPageBrowserTest {
  @TempDir Path dir;
  ChromeDriver browser;

  @BeforeEach
  void open() {
    browser = HeadlessChromium.start();
  }

  @AfterEach
  void quit() {
    if (browser != null) {
      browser.quit();
    }
  }

  private void awaitText(String id, String text) {
    HeadlessChromium.waitFor(browser).withMessage(() -> "#" + id + " never showed '" + text
            + "'; it shows: " + browser.findElement(By.id(id)).getText())
        .until(ExpectedConditions.textToBePresentInElementLocated(By.id(id), text));
  }

  @Test
  void showsANackingClientsMessageAndAClientThatConnectsLaterWithoutAReload() throws Exception {
    try (OpsFixture f = new OpsFixture(dir)) {
      String markup = "listener 'http': <b>bad</b> filter chain <script>alert(1)</script>";
      try (RawXdsClient.Sotw nacker = f.ads("envoy-nacker", "edge")) {
        nacker.nack(nacker.subscribe(LISTENER), "", markup);
        browser.get("http://127.0.0.1:" + f.server.httpPort() + "/");
        awaitText("clients", "envoy-nacker");
        awaitText("clients", "LDS NACKed");
        // The message as the client wrote it: text, not markup.
        awaitText("clients", markup);
        assertThat(browser.findElements(By.cssSelector("#clients b, #clients script"))).isEmpty();
        assertThat(browser.findElement(By.id("readiness")).getText()).isEqualTo("ready");
        assertThat(browser.findElement(By.id("control-plane")).getText())
            .isEqualTo(f.server.hub().controlPlaneId());
        assertThat(browser.findElement(By.id("groups")).getText()).contains("default");
        // The inline style is allowed by the policy's hash: a NACK badge is red on pink.
        assertThat(browser.findElement(By.cssSelector("#clients .pill.bad"))
            .getCssValue("background-color")).isEqualTo("rgba(254, 228, 226, 1)");

        WebElement header = browser.findElement(By.tagName("header"));
        try (RawXdsClient.Sotw second = f.ads("envoy-second", "edge")) {
          second.ack(second.subscribe(CLUSTER));
          awaitText("clients", "envoy-second");
          awaitText("clients", "CDS ✓");
          awaitText("client-count", "2 streams");
        }
        // Still the page first loaded: an element of it is still attached (no navigation).
        assertThat(header.isDisplayed()).isTrue();

        ConfigFiles.replaceByRename(f.file, "resources: [ {");
        awaitText("last-failed", "rejected");
        assertThat(browser.findElement(By.id("last-failed-errors")).getText()).isNotEmpty();
      }
    }
  }

  /**
   * The state shown is the state served: the page shows the served config's warnings, a
   * truncated file held with what it would remove, then, once the file is back, the recovery,
   * with the hold marked resolved.
   */
  @Test
  void showsWarningsAHeldReloadWithWhatItWouldRemoveAndThenItsRecovery() throws Exception {
    try (OpsFixture f = new OpsFixture(dir)) {
      browser.get("http://127.0.0.1:" + f.server.httpPort() + "/");
      awaitText("config-state", "ok");
      awaitText("warning-count", "1 warning");
      awaitText("config-warnings", "dangling reference");
      assertThat(browser.findElement(By.id("last-held")).getText()).isEqualTo("none");

      java.nio.file.Files.write(f.file, new byte[0]);
      awaitText("config-state", "held");
      awaitText("last-reload", "held: it would empty what is served");
      awaitText("last-held-removes", "the whole config: all 4 resources");
      assertThat(browser.findElement(By.id("last-held-removes")).getText())
          .contains("file meridian.yaml: emptied");
      assertThat(browser.findElement(By.id("last-held")).getText()).doesNotContain("resolved");

      java.nio.file.Files.writeString(f.file, OpsFixture.config("1s"));
      awaitText("config-state", "ok");
      awaitText("last-reload", "recovered");
      awaitText("last-held", "resolved");
      assertThat(browser.findElement(By.id("last-held-removes")).getAttribute("class"))
          .contains("resolved");
    }
  }

  @Test
  void worksMountedBelowAPrefixInTheApplicationsOwnHttpServer() throws Exception {
    Meridian meridian = Meridian.builder().controlPlaneId("app-cp").build()
        .start(new InetSocketAddress("127.0.0.1", 0));
    HttpServer app = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    ManagedChannel channel = ManagedChannelBuilder.forAddress("127.0.0.1", meridian.port())
        .usePlaintext().build();
    try {
      app.createContext("/meridian", meridian.admin().httpHandler());
      app.start();
      meridian.publisher().set("default", List.of(Cluster.newBuilder().setName("a").build()));
      try (RawXdsClient.Sotw envoy = RawXdsClient.sotwAds(channel, "mounted-envoy")) {
        envoy.ack(envoy.subscribe(CLUSTER));
        // Without the trailing slash: redirected to /meridian/, where status and clients resolve.
        browser.get("http://127.0.0.1:" + app.getAddress().getPort() + "/meridian");
        awaitText("clients", "mounted-envoy");
        assertThat(browser.getCurrentUrl()).endsWith("/meridian/");
        awaitText("control-plane", "app-cp");
        awaitText("last-reload", "served");
        assertThat(browser.findElement(By.linkText("metrics")).getAttribute("href"))
            .endsWith("/meridian/metrics");
      }
    } finally {
      channel.shutdownNow();
      app.stop(0);
      meridian.close();
      channel.awaitTermination(5, TimeUnit.SECONDS);
    }
  }
}
