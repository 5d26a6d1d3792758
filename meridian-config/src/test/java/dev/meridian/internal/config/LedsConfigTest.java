package dev.meridian.internal.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.internal.protocol.XdsResource;
import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Envoy's LEDS in a config (issue 26, docs/config.md "LEDS"): an {@code LbEndpoint} has no name
 * field, so it is written in the {@code envoy.service.discovery.v3.Resource} wrapper whose
 * {@code name} is a member of its locality's glob collection; a ClusterLoadAssignment's
 * {@code leds_collection_name} must name such a collection (endpoint_components.proto,
 * LedsClusterLocalityConfig: Envoy supports only glob collections).
 */
class LedsConfigTest {
  private static final String EP = "xdstp://mesh.example/envoy.config.endpoint.v3.LbEndpoint/";
  private static final String WRAPPER = "type.googleapis.com/envoy.service.discovery.v3.Resource";

  @TempDir Path dir;

  private Path write(String file, String text) throws IOException {
    Path p = dir.resolve(file);
    Files.writeString(p, text);
    return p;
  }

  private static final String VALID = """
      resources:
        - "@type": type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment
          cluster_name: backend
          endpoints:
            - locality: { zone: zone-a }
              leds_cluster_locality_config:
                leds_config: { ads: {}, resource_api_version: V3 }
                leds_collection_name: xdstp://mesh.example/envoy.config.endpoint.v3.LbEndpoint/backend/zone-a/*
        - "@type": type.googleapis.com/envoy.service.discovery.v3.Resource
          name: xdstp://mesh.example/envoy.config.endpoint.v3.LbEndpoint/backend/zone-a/10.0.0.1:8080
          resource:
            "@type": type.googleapis.com/envoy.config.endpoint.v3.LbEndpoint
            endpoint: { address: { socket_address: { address: 10.0.0.1, port_value: 8080 } } }
        - "@type": type.googleapis.com/envoy.service.discovery.v3.Resource
          name: xdstp://mesh.example/envoy.config.endpoint.v3.LbEndpoint/backend/zone-a/10.0.0.2:8080
          ttl: 30s
          resource:
            "@type": type.googleapis.com/envoy.config.endpoint.v3.LbEndpoint
            endpoint: { address: { socket_address: { address: 10.0.0.2, port_value: 8080 } } }
      """;

  @Test
  void lbEndpointIsNamedByItsResourceWrapperAndTheLedsClaLoads() throws Exception {
    ServedConfig c = new ConfigLoader().load(write("c.yaml", VALID)).config();
    Map<String, XdsResource> eps = c.defaults().get(ResourceType.LB_ENDPOINT).resources();
    assertThat(eps).containsOnlyKeys(EP + "backend/zone-a/10.0.0.1:8080",
        EP + "backend/zone-a/10.0.0.2:8080");
    assertThat(((LbEndpoint) eps.get(EP + "backend/zone-a/10.0.0.1:8080").message())
        .getEndpoint().getAddress().getSocketAddress().getPortValue()).isEqualTo(8080);
    assertThat(eps.get(EP + "backend/zone-a/10.0.0.2:8080").ttl().getSeconds()).isEqualTo(30);
    ClusterLoadAssignment cla = (ClusterLoadAssignment) c.defaults().get(ResourceType.ENDPOINT)
        .get("backend").message();
    assertThat(cla.getEndpoints(0).getLedsClusterLocalityConfig().getLedsCollectionName())
        .isEqualTo(EP + "backend/zone-a/*");
  }

  @Test
  void lbEndpointInStrictJsonLoadsTheSameWay() throws Exception {
    Path p = write("c.json", """
        {"resources": [{"@type": "%s",
          "name": "%sb/z/one",
          "resource": {"@type": "type.googleapis.com/envoy.config.endpoint.v3.LbEndpoint",
            "endpoint": {"address": {"socketAddress": {"address": "10.0.0.1", "portValue": 80}}}}}]}
        """.formatted(WRAPPER, EP));
    assertThat(new ConfigLoader().load(p).config().defaults().get(ResourceType.LB_ENDPOINT)
        .resources()).containsOnlyKeys(EP + "b/z/one");
  }

  @Test
  void lbEndpointWithoutAWrapperNameIsRefusedSayingHowToNameIt() throws Exception {
    Path p = write("c.yaml", """
        resources:
          - "@type": type.googleapis.com/envoy.config.endpoint.v3.LbEndpoint
            endpoint: { address: { socket_address: { address: 10.0.0.1, port_value: 80 } } }
        """);
    assertThatThrownBy(() -> new ConfigLoader().load(p)).isInstanceOf(ConfigException.class)
        .hasMessageContaining("c.yaml:2:5: resources[0] (type.googleapis.com/"
            + "envoy.config.endpoint.v3.LbEndpoint): an LbEndpoint has no name field; wrap it in"
            + " a Resource with a 'name'");
  }

  @Test
  void lbEndpointNamedOtherThanByAnXdstpLbEndpointNameIsRefusedAtTheName() throws Exception {
    Path plain = write("c.yaml", """
        resources:
          - "@type": type.googleapis.com/envoy.service.discovery.v3.Resource
            name: backend-1
            resource: { "@type": type.googleapis.com/envoy.config.endpoint.v3.LbEndpoint }
        """);
    assertThatThrownBy(() -> new ConfigLoader().load(plain))
        .hasMessageContaining("c.yaml:3:11: resources[0] (type.googleapis.com/"
            + "envoy.config.endpoint.v3.LbEndpoint 'backend-1'): an LbEndpoint (LEDS) is named by"
            + " a member of its locality's glob collection");
    Path otherType = write("c.yaml", """
        resources:
          - "@type": type.googleapis.com/envoy.service.discovery.v3.Resource
            name: xdstp://mesh.example/envoy.config.endpoint.v3.ClusterLoadAssignment/b/z/one
            resource: { "@type": type.googleapis.com/envoy.config.endpoint.v3.LbEndpoint }
        """);
    assertThatThrownBy(() -> new ConfigLoader().load(otherType))
        .hasMessageContaining("c.yaml:3:11:").hasMessageContaining("type segment");
    Path glob = write("c.yaml", """
        resources:
          - "@type": type.googleapis.com/envoy.service.discovery.v3.Resource
            name: xdstp://mesh.example/envoy.config.endpoint.v3.LbEndpoint/b/z/*
            resource: { "@type": type.googleapis.com/envoy.config.endpoint.v3.LbEndpoint }
        """);
    assertThatThrownBy(() -> new ConfigLoader().load(glob))
        .hasMessageContaining("c.yaml:3:11:").hasMessageContaining("is a glob collection");
  }

  @Test
  void ledsCollectionNameThatIsNotAnLbEndpointGlobIsRefusedAtItsLine() throws Exception {
    Path notGlob = write("c.yaml", """
        resources:
          - "@type": type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment
            cluster_name: backend
            endpoints:
              - leds_cluster_locality_config:
                  leds_collection_name: xdstp://mesh.example/envoy.config.endpoint.v3.LbEndpoint/b/z
        """);
    assertThatThrownBy(() -> new ConfigLoader().load(notGlob))
        .hasMessageContaining("c.yaml:6:33: resources[0] (type.googleapis.com/"
            + "envoy.config.endpoint.v3.ClusterLoadAssignment 'backend'): endpoints[0]"
            + ".leds_cluster_locality_config: leds_collection_name xdstp://mesh.example/"
            + "envoy.config.endpoint.v3.LbEndpoint/b/z is not a glob collection (it must end in /*)");
    Path camelOtherType = write("c.yaml", """
        resources:
          - "@type": type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment
            clusterName: backend
            endpoints:
              - {}
              - ledsClusterLocalityConfig:
                  ledsCollectionName: xdstp://mesh.example/envoy.config.cluster.v3.Cluster/b/*
        """);
    assertThatThrownBy(() -> new ConfigLoader().load(camelOtherType))
        .hasMessageContaining("c.yaml:7:31:").hasMessageContaining("endpoints[1]")
        .hasMessageContaining("type segment 'envoy.config.cluster.v3.Cluster'");
  }

  @Test
  void ledsLocalityThatAlsoListsLbEndpointsIsRefusedSinceEnvoyWouldIgnoreThem() throws Exception {
    Path p = write("c.yaml", """
        resources:
          - "@type": type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment
            cluster_name: backend
            endpoints:
              - lb_endpoints:
                  - endpoint: { address: { socket_address: { address: 10.0.0.1, port_value: 80 } } }
                leds_cluster_locality_config:
                  leds_collection_name: xdstp://mesh.example/envoy.config.endpoint.v3.LbEndpoint/b/z/*
        """);
    assertThatThrownBy(() -> new ConfigLoader().load(p))
        .hasMessageContaining("may not list lb_endpoints too");
  }

  @Test
  void wrapperNameOtherThanTheResourcesOwnIsRefused() throws Exception {
    Path p = write("c.yaml", """
        resources:
          - "@type": type.googleapis.com/envoy.service.discovery.v3.Resource
            name: other
            ttl: 5s
            resource: { "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster, name: web }
        """);
    assertThatThrownBy(() -> new ConfigLoader().load(p))
        .hasMessageContaining("c.yaml:3:11: resources[0] (type.googleapis.com/"
            + "envoy.config.cluster.v3.Cluster 'web'): the Resource wrapper's name 'other' is not"
            + " the resource's own name");
  }

  @Test
  void lbEndpointsAreStoredWithTheirNameAndReadBackFromTheStore() throws Exception {
    ServedConfig c = new ConfigLoader().load(write("c.yaml", VALID)).config();
    StoreLayout layout = new StoreLayout("/meridian");
    Map<String, String> entries = new StoreValues(layout).entriesOf(c);
    String key = "/meridian/resources/default/lb-endpoints/" + EP + "backend/zone-a/10.0.0.1:8080";
    assertThat(entries).containsKey(key);
    assertThat(entries.get(key)).contains("\"@type\":\"" + WRAPPER + "\"",
        "\"name\":\"" + EP + "backend/zone-a/10.0.0.1:8080\"");
    ServedConfig back = new ConfigLoader().loadStored(layout, entries).config();
    assertThat(back.defaults().get(ResourceType.LB_ENDPOINT).resources())
        .isEqualTo(c.defaults().get(ResourceType.LB_ENDPOINT).resources());
  }
}
