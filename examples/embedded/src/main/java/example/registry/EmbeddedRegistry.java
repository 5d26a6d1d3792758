package example.registry;

import dev.meridian.server.Meridian;
import dev.meridian.server.NodeGrouping;
import dev.meridian.server.Validation;
import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * The service registry with Meridian embedded: xDS on one port, the registry's HTTP API on
 * another, Meridian's admin pages ({@code /clients}, {@code /config_dump}, {@code /metrics},
 * {@code /readyz}) on a third.
 */
public final class EmbeddedRegistry implements AutoCloseable {
  /** Every client sees the whole registry; a real one might group by {@code node.cluster}. */
  public static final String GROUP = "mesh";

  /**
   * Every node with an id is served the group {@link #GROUP}; a node without one is refused
   * (its stream ends PERMISSION_DENIED), since nobody could tell it apart on the admin pages.
   */
  static final NodeGrouping GROUPING =
      (node, identity) -> node.getId().isEmpty() ? null : GROUP;

  private final Meridian meridian;
  private final RegistryHttp http;
  private final InetSocketAddress admin;

  private EmbeddedRegistry(Meridian meridian, RegistryHttp http, InetSocketAddress admin) {
    this.meridian = meridian;
    this.http = http;
    this.admin = admin;
  }

  /**
   * Publishes {@code registry}, then opens the three ports (port 0: any free port).
   */
  public static EmbeddedRegistry start(ServiceRegistry registry, InetSocketAddress xds,
      InetSocketAddress httpApi, InetSocketAddress adminHttp) throws IOException {
    Meridian meridian = Meridian.builder()
        .controlPlaneId("embedded-registry")
        .grouping(GROUPING)
        // the checks `meridian serve` runs on a file reload, as warnings in the log
        .validation(Validation.WARN)
        .callbacks(new StreamLog())
        .build();
    try {
      // Publish before opening the port: clients connecting earlier would get UNAVAILABLE.
      RegistryPublisher.attach(registry, meridian.publisher(), GROUP);
      meridian.start(xds);
      InetSocketAddress admin = meridian.admin().startHttp(adminHttp);
      return new EmbeddedRegistry(meridian, new RegistryHttp(registry, httpApi), admin);
    } catch (IOException | RuntimeException e) {
      meridian.close();
      throw e;
    }
  }

  public Meridian meridian() {
    return meridian;
  }

  public int xdsPort() {
    return meridian.port();
  }

  public InetSocketAddress httpAddress() {
    return http.address();
  }

  public InetSocketAddress adminAddress() {
    return admin;
  }

  /** Stops taking registrations, then ends every xDS stream gracefully and closes the ports. */
  @Override
  public void close() {
    http.close();
    meridian.close();
  }
}
