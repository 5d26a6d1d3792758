package dev.meridian.internal.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The consistency check on load (spec "Resource warming"). */
class ReferenceCheckTest {
  @TempDir Path dir;

  @Test
  void bundledExampleHasNoDanglingReferences() throws Exception {
    assertThat(ReferenceCheck.problems(new ConfigLoader().load(Path.of("..", "examples", "quickstart.yaml")).config()))
        .isEmpty();
  }

  @Test
  void danglingReferencesAreNamed() throws Exception {
    Path p = dir.resolve("c.yaml");
    Files.writeString(p, """
        resources:
          - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
            name: backend
            type: EDS
            eds_cluster_config: { eds_config: { ads: {} }, service_name: backend-eds }
          - "@type": type.googleapis.com/envoy.config.listener.v3.Listener
            name: http
            filter_chains:
              - filters:
                  - name: hcm
                    typed_config:
                      "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
                      stat_prefix: x
                      rds: { route_config_name: missing_routes, config_source: { ads: {} } }
          - "@type": type.googleapis.com/envoy.config.route.v3.RouteConfiguration
            name: other_routes
            virtual_hosts:
              - name: vh
                domains: ["*"]
                routes: [ { match: { prefix: "/" }, route: { cluster: nowhere } } ]
        """);
    assertThat(ReferenceCheck.problems(new ConfigLoader().load(p).config())).containsExactly(
        "group 'default': EDS cluster 'backend' has no endpoints: no ClusterLoadAssignment with cluster_name 'backend-eds'",
        "group 'default': listener 'http' uses RDS route configuration 'missing_routes', which no RouteConfiguration provides",
        "group 'default': route configuration 'other_routes' virtual host 'vh' routes to cluster 'nowhere', which does not exist");
  }
}
