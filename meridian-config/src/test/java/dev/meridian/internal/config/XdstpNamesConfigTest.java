package dev.meridian.internal.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.meridian.xds.ResourceType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Issue 26: resources named {@code xdstp://} in a config (xDS TP1 "URI-based xDS resource names"). */
class XdstpNamesConfigTest {
  @TempDir Path dir;

  private Path write(String text) throws IOException {
    Path p = dir.resolve("c.yaml");
    Files.writeString(p, text);
    return p;
  }

  @Test
  void canonicalXdstpNameOfTheResourcesOwnTypeLoads() throws Exception {
    Path p = write("""
        resources:
          - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
            name: xdstp://mine.example/envoy.config.cluster.v3.Cluster/svc/a?k=v&z=1
        """);
    assertThat(new ConfigLoader().load(p).config().defaults().get(ResourceType.CLUSTER)
        .resources()).containsOnlyKeys(
            "xdstp://mine.example/envoy.config.cluster.v3.Cluster/svc/a?k=v&z=1");
  }

  @Test
  void typeSegmentOtherThanTheResourcesTypeIsRefusedAtItsLine() throws Exception {
    Path p = write("""
        resources:
          - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
            name: xdstp://mine.example/envoy.config.listener.v3.Listener/a
        """);
    assertThatThrownBy(() -> new ConfigLoader().load(p)).isInstanceOf(ConfigException.class)
        .hasMessageContaining("c.yaml:2:5: resources[0]: ")
        .hasMessageContaining("type segment 'envoy.config.listener.v3.Listener'")
        .hasMessageContaining("envoy.config.cluster.v3.Cluster");
  }

  @Test
  void nonCanonicalNameIsRefusedWithItsCanonicalForm() throws Exception {
    Path p = write("""
        resources:
          - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
            name: xdstp://mine.example/envoy.config.cluster.v3.Cluster/a?z=1&k=%7e
        """);
    assertThatThrownBy(() -> new ConfigLoader().load(p)).isInstanceOf(ConfigException.class)
        .hasMessageContaining("not in canonical form")
        .hasMessageContaining("write it as xdstp://mine.example/envoy.config.cluster.v3.Cluster/a?k=~&z=1");
  }

  @Test
  void globOrMalformedNameIsRefused() throws Exception {
    Path glob = write("""
        resources:
          - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
            name: xdstp://mine.example/envoy.config.cluster.v3.Cluster/svc/*
        """);
    assertThatThrownBy(() -> new ConfigLoader().load(glob)).hasMessageContaining("glob collection");
    Path malformed = write("""
        resources:
          - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
            name: xdstp://mine.example/envoy.config.cluster.v3.Cluster
        """);
    assertThatThrownBy(() -> new ConfigLoader().load(malformed)).hasMessageContaining("resource id");
  }
}
