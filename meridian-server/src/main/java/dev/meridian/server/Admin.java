package dev.meridian.server;

import com.sun.net.httpserver.HttpHandler;
import dev.meridian.internal.server.EmbeddedServer;
import io.envoyproxy.envoy.service.status.v3.ClientStatusRequest;
import io.envoyproxy.envoy.service.status.v3.ClientStatusResponse;
import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * What Meridian's admin port shows, for the embedding application: the same data as
 * {@code /clients}, {@code /config_dump}, {@code /metrics} and CSDS (docs/operations.md), as
 * values, as one HTTP handler to mount in the application's own JDK HTTP server, or on a port of
 * Meridian's own. The config dump shows every resource (Secrets redacted) and {@code /clients}
 * every client: expose them only to operators.
 */
public final class Admin {
  private final EmbeddedServer engine;

  Admin(EmbeddedServer engine) {
    this.engine = engine;
  }

  /** The body of {@code /clients}: every connected stream, its node, group and per-type state. */
  public String clientsJson() {
    try {
      return engine.clientsJson();
    } catch (Exception e) {
      throw new IllegalStateException("stream status unavailable: " + e, e);
    }
  }

  /** The body of {@code /config_dump}: every group's resources (Secrets redacted). */
  public String configDumpJson() {
    return engine.configDumpJson();
  }

  /**
   * The body of {@code /metrics} in the Prometheus text format (names in docs/operations.md):
   * Meridian's metrics and the JVM's and process's. The HTTP handler serves OpenMetrics instead
   * when the scraper asks for it.
   */
  public String metricsText() {
    return engine.metricsText();
  }

  /** What CSDS answers: the config of each client that {@code request}'s node matchers select. */
  public ClientStatusResponse clientStatus(ClientStatusRequest request) {
    try {
      return engine.clientStatus(request);
    } catch (Exception e) {
      throw new IllegalStateException("client status unavailable: " + e, e);
    }
  }

  /**
   * Every admin endpoint as one handler for the application's own
   * {@code com.sun.net.httpserver.HttpServer}: mounted at {@code /meridian},
   * {@code /meridian/clients} serves {@code /clients}. Paths: {@code /healthz}, {@code /readyz},
   * {@code /config_dump}, {@code /clients}, {@code /metrics}, {@code /status}, and the status page
   * at {@code /meridian/} ({@code /meridian} redirects there, as the page's links are relative).
   */
  public HttpHandler httpHandler() {
    return engine.adminHandler();
  }

  /**
   * Serves the admin endpoints on a port of Meridian's own (port 0: any free port), until
   * {@link Meridian#close}. Bind it to loopback unless operators need it elsewhere.
   *
   * @return the bound address
   */
  public InetSocketAddress startHttp(InetSocketAddress address) throws IOException {
    return engine.startAdmin(address);
  }
}
