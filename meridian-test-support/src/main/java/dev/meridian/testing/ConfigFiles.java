package dev.meridian.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/** Config files replaced the way editors and config management tools replace them. */
public final class ConfigFiles {
  private ConfigFiles() {}

  /**
   * A Cluster named {@code name}, as an item of a config's {@code resources:}, whose
   * UpstreamTlsContext inlines the private key {@code key}: key material outside a Secret.
   */
  public static String clusterWithInlineKey(String name, String key) {
    return """
          - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
            name: %s
            connect_timeout: 1s
            transport_socket:
              name: envoy.transport_sockets.tls
              typed_config:
                "@type": type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext
                common_tls_context:
                  tls_certificates: [ { private_key: { inline_string: "%s" } } ]
        """.formatted(name, key);
  }

  /**
   * Replaces {@code file} with {@code text} atomically: writes a hidden temporary file beside it
   * (a config directory's loader skips it), then renames it over {@code file}. A watcher never sees
   * the file half-written. Returns {@link System#nanoTime()} taken just before the rename, for
   * tests that time what follows it.
   */
  public static long replaceByRename(Path file, String text) throws IOException {
    Path tmp = file.resolveSibling("." + file.getFileName() + ".tmp");
    Files.writeString(tmp, text);
    long renamed = System.nanoTime();
    Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    return renamed;
  }

  /**
   * A config whose ClusterLoadAssignment {@code cluster} has one locality fed by LEDS from the
   * glob {@code collection}, and the LbEndpoints {@code endpoints} (full name to a port of
   * 10.0.0.1), each named by its Resource wrapper (docs/config.md "LEDS").
   */
  public static String leds(String cluster, String collection,
      java.util.Map<String, Integer> endpoints) {
    StringBuilder yaml = new StringBuilder("""
        resources:
          - "@type": type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment
            cluster_name: %s
            endpoints:
              - leds_cluster_locality_config:
                  leds_config: { ads: {}, resource_api_version: V3 }
                  leds_collection_name: %s
        """.formatted(cluster, collection));
    endpoints.forEach((name, port) -> yaml.append("""
          - "@type": type.googleapis.com/envoy.service.discovery.v3.Resource
            name: %s
            resource:
              "@type": type.googleapis.com/envoy.config.endpoint.v3.LbEndpoint
              endpoint: { address: { socket_address: { address: 10.0.0.1, port_value: %d } } }
        """.formatted(name, port)));
    return yaml.toString();
  }
}
