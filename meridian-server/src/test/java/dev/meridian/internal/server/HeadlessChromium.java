package dev.meridian.internal.server;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * Debian's chromium driven by its chromedriver (packages chromium and chromium-driver; .ci/run
 * installs them), headless, for the status page tests (issue 24). Selenium is given both paths,
 * so it never looks for or downloads a browser or driver of its own. A machine without them fails
 * the tests that need them, saying what to install: they are never skipped.
 */
final class HeadlessChromium {
  static final Path CHROMIUM = Path.of(System.getProperty("meridian.chromium", "/usr/bin/chromium"));
  static final Path CHROMEDRIVER =
      Path.of(System.getProperty("meridian.chromedriver", "/usr/bin/chromedriver"));
  /** How long a test waits for the page to show something (it refreshes every 2 s). */
  static final Duration WAIT = Duration.ofSeconds(20);

  /**
   * Quiets "Unable to find CDP implementation matching N": Debian's chromium is often newer than
   * the DevTools bindings Selenium ships, and these tests use WebDriver only, never DevTools.
   */
  private static final java.util.logging.Logger CDP_LOG = quiet("org.openqa.selenium.devtools");

  private HeadlessChromium() {}

  private static java.util.logging.Logger quiet(String name) {
    java.util.logging.Logger l = java.util.logging.Logger.getLogger(name);
    l.setLevel(java.util.logging.Level.SEVERE);
    return l;
  }

  /** A headless browser with a 1280x800 window; fails if chromium or chromedriver is missing. */
  static ChromeDriver start() {
    for (Path p : new Path[] {CHROMIUM, CHROMEDRIVER}) {
      if (!Files.isExecutable(p)) {
        throw new AssertionError(p + " is missing: the status page tests need Debian's chromium "
            + "and chromedriver (apt-get install -y chromium chromium-driver; .ci/run installs "
            + "them), or -Dmeridian.chromium=... -Dmeridian.chromedriver=... elsewhere");
      }
    }
    ChromeOptions options = new ChromeOptions();
    options.setBinary(CHROMIUM.toFile());
    // --no-sandbox: CI runs as root, where chromium's sandbox refuses to start.
    options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
        "--disable-gpu", "--window-size=1280,800", "--lang=en-US", "--no-first-run",
        "--disable-extensions", "--disable-background-networking");
    ChromeDriverService service = new ChromeDriverService.Builder()
        .usingDriverExecutable(new File(CHROMEDRIVER.toString()))
        .usingAnyFreePort()
        .build();
    ChromeDriver driver = new ChromeDriver(service, options);
    driver.manage().window().setSize(new Dimension(1280, 800));
    return driver;
  }

  static WebDriverWait waitFor(ChromeDriver driver) {
    return new WebDriverWait(driver, WAIT, Duration.ofMillis(100));
  }
}
