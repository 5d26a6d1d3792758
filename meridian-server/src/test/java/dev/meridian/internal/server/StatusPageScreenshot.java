package dev.meridian.internal.server;

import static dev.meridian.xds.ResourceType.CLUSTER;
import static dev.meridian.xds.ResourceType.ENDPOINT;
import static dev.meridian.xds.ResourceType.LISTENER;
import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.testing.ConfigFiles;
import dev.meridian.testing.RawXdsClient;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.ExpectedConditions;

/**
 * Takes docs/images/status-page.png (docs/operations.md): the status page with three clients, one
 * of them NACKing, and a rejected reload. Not a test of anything; runs only when asked:
 * {@code mvn -B -o test -pl meridian-server -am -Dtest=StatusPageScreenshot
 * -Dsurefire.failIfNoSpecifiedTests=false -Dmeridian.screenshot=$PWD/docs/images/status-page.png}.
 */
@EnabledIfSystemProperty(named = "meridian.screenshot", matches = ".+")
class StatusPageScreenshot {
  @TempDir Path dir;

  @Test
  void screenshot() throws Exception {
    Path out = Path.of(System.getProperty("meridian.screenshot"));
    ChromeDriver browser = HeadlessChromium.start();
    try (OpsFixture f = new OpsFixture(dir, o -> o.withControlPlaneId("meridian-eu-west-1a"));
        RawXdsClient.Sotw edge1 = f.ads("envoy-edge-7f9c", "edge");
        RawXdsClient.Sotw edge2 = f.ads("envoy-edge-2b41", "edge");
        RawXdsClient.Sotw checkout = f.ads("checkout-sidecar-0", "edge")) {
      // A rejected reload, then a good one; then the clients, so that they have the config.
      ConfigFiles.replaceByRename(f.file, OpsFixture.config("1s") + "  - { \"@type\": oops }\n");
      OpsFixture.await("rejected reload", () -> f.server.hub().reloads().lastFailure() != null);
      f.reload(OpsFixture.config("2s"));
      edge1.ack(edge1.subscribe(CLUSTER));
      edge1.ack(edge1.subscribe(ENDPOINT, "greeter-v1"), "greeter-v1");
      edge1.ack(edge1.subscribe(LISTENER));
      edge2.ack(edge2.subscribe(CLUSTER));
      edge2.nack(edge2.subscribe(LISTENER), "", "Error adding/updating listener(s) http: "
          + "envoy.filters.network.http_connection_manager: unknown cluster 'greeter-v3'");
      checkout.ack(checkout.subscribe(CLUSTER));
      checkout.subscribe(LISTENER); // not acknowledged (yet): waiting
      browser.get("http://127.0.0.1:" + f.server.httpPort() + "/");
      HeadlessChromium.waitFor(browser).until(ExpectedConditions.textToBePresentInElementLocated(
          By.id("client-count"), "3 streams"));
      HeadlessChromium.waitFor(browser).until(ExpectedConditions.textToBePresentInElementLocated(
          By.id("last-failed"), "rejected"));
      HeadlessChromium.waitFor(browser).until(ExpectedConditions.textToBePresentInElementLocated(
          By.id("clients"), "unknown cluster 'greeter-v3'"));
      Files.createDirectories(out.toAbsolutePath().getParent());
      Files.write(out, browser.getScreenshotAs(OutputType.BYTES));
      assertThat(Files.size(out)).isLessThan(200_000);
    } finally {
      browser.quit();
    }
  }
}
