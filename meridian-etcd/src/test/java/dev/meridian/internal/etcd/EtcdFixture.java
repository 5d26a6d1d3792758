package dev.meridian.internal.etcd;

import dev.meridian.internal.config.ConfigLoader;
import dev.meridian.internal.protocol.ServedConfig;
import io.etcd.jetcd.Client;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Config files for the etcd scenarios: clusters with endpoints, a group, a listener. */
final class EtcdFixture {
  private EtcdFixture() {}

  static String cluster(String name) {
    return """
          - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
            name: %s
            type: EDS
            connect_timeout: 1s
            eds_cluster_config: { eds_config: { ads: {} } }
        """.formatted(name);
  }

  static String endpoints(String cluster, int port) {
    return """
          - "@type": type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment
            cluster_name: %s
            endpoints:
              - lb_endpoints:
                  - endpoint: { address: { socket_address: { address: 10.0.0.1, port_value: %d } } }
        """.formatted(cluster, port);
  }

  /** A config of {@code clusters} EDS clusters c0..cN-1 with endpoints on {@code port}. */
  static String clusters(int clusters, int port) {
    StringBuilder b = new StringBuilder("resources:\n");
    for (int i = 0; i < clusters; i++) {
      b.append(cluster("c" + i)).append(endpoints("c" + i, port));
    }
    return b.toString();
  }

  static Path write(Path dir, String name, String yaml) throws IOException {
    Files.createDirectories(dir);
    return Files.writeString(dir.resolve(name), yaml);
  }

  static ServedConfig load(Path path) throws Exception {
    return new ConfigLoader().load(path).config();
  }

  static Client client(String endpoints) {
    String[] eps = java.util.Arrays.stream(endpoints.split(",")).map(e -> "http://" + e)
        .toArray(String[]::new);
    return Client.builder().endpoints(eps).build();
  }
}
