package dev.meridian.internal.server;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * The admin port's status page (issue 24): {@code status.html} with its inline style and
 * {@code status.js}, both from the jar, and the Content-Security-Policy they are served with.
 */
final class StatusPage {
  private StatusPage() {}

  static final String HTML = resource("status.html");
  static final String JS = resource("status.js");

  /**
   * Only this origin: its script (no inline script), its JSON, and the page's one style element by
   * hash; nothing may frame the page.
   */
  static final String CSP = "default-src 'none'; script-src 'self'; connect-src 'self'; "
      + "img-src 'self' data:; style-src '" + styleHash(HTML) + "'; base-uri 'none'; "
      + "form-action 'none'; frame-ancestors 'none'";

  /** The CSP source of the page's {@code <style>} element: the SHA-256 of its exact content. */
  static String styleHash(String html) {
    int open = html.indexOf("<style>");
    int close = html.indexOf("</style>");
    if (open < 0 || close < open) {
      throw new IllegalStateException("status.html has no <style> element");
    }
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(
          html.substring(open + "<style>".length(), close).getBytes(StandardCharsets.UTF_8));
      return "sha256-" + Base64.getEncoder().encodeToString(digest);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String resource(String name) {
    try (InputStream in = StatusPage.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + name + " next to StatusPage");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
