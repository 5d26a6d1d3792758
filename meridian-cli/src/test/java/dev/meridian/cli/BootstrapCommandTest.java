package dev.meridian.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.protocol.EnvoyTypeRegistry;
import dev.meridian.protocol.ResourceType;
import dev.meridian.server.FilePublisher;
import io.envoyproxy.envoy.config.bootstrap.v3.Bootstrap;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.ApiConfigSource;
import io.envoyproxy.envoy.config.core.v3.ConfigSource;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/** `meridian bootstrap envoy`: every mode's output parses as an Envoy Bootstrap and points at what Meridian serves. */
class BootstrapCommandTest {
  static String run(String... args) {
    PrintStream out = System.out;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setOut(new PrintStream(captured, true));
    try {
      assertThat(Main.run(args)).isZero();
    } finally {
      System.setOut(out);
    }
    return captured.toString();
  }

  static Bootstrap parse(String yaml) throws Exception {
    Object tree = new Yaml().load(yaml);
    Bootstrap.Builder b = Bootstrap.newBuilder();
    // Strict: an unknown field anywhere would fail here, as it would in Envoy.
    EnvoyTypeRegistry.get().parser().merge(new com.google.gson.Gson().toJson(tree), b);
    return b.build();
  }

  static Cluster staticCluster(Bootstrap b, String name) {
    return b.getStaticResources().getClustersList().stream().filter(c -> c.getName().equals(name))
        .findFirst().orElseThrow(() -> new AssertionError("no static cluster " + name));
  }

  static int port(Cluster c) {
    return c.getLoadAssignment().getEndpoints(0).getLbEndpoints(0).getEndpoint().getAddress()
        .getSocketAddress().getPortValue();
  }

  @ParameterizedTest
  @ValueSource(strings = {"ads", "delta-ads", "xds", "delta-xds"})
  void grpcModesPointAtTheXdsPort(String mode) throws Exception {
    Bootstrap b = parse(run("bootstrap", "envoy", "--mode", mode, "--server", "10.1.2.3:18123",
        "--node-id", "edge-1"));
    assertThat(b.getNode().getId()).isEqualTo("edge-1");
    Cluster xds = staticCluster(b, BootstrapCommand.XDS_CLUSTER);
    assertThat(port(xds)).isEqualTo(18123);
    assertThat(xds.getTypedExtensionProtocolOptionsMap()).containsKey(
        "envoy.extensions.upstreams.http.v3.HttpProtocolOptions");
    ApiConfigSource.ApiType expected = mode.startsWith("delta") ? ApiConfigSource.ApiType.DELTA_GRPC
        : ApiConfigSource.ApiType.GRPC;
    assertThat(b.getDynamicResources().getAdsConfig().getApiType()).isEqualTo(expected);
    for (ConfigSource cs : List.of(b.getDynamicResources().getCdsConfig(), b.getDynamicResources().getLdsConfig())) {
      if (mode.endsWith("ads")) {
        assertThat(cs.hasAds()).isTrue();
      } else {
        assertThat(cs.getApiConfigSource().getApiType()).isEqualTo(expected);
        assertThat(cs.getApiConfigSource().getGrpcServices(0).getEnvoyGrpc().getClusterName())
            .isEqualTo(BootstrapCommand.XDS_CLUSTER);
      }
    }
  }

  @Test
  void restModePollsTheHttpPort() throws Exception {
    Bootstrap b = parse(run("bootstrap", "envoy", "--mode", "rest"));
    ApiConfigSource cds = b.getDynamicResources().getCdsConfig().getApiConfigSource();
    assertThat(cds.getApiType()).isEqualTo(ApiConfigSource.ApiType.REST);
    assertThat(port(staticCluster(b, cds.getClusterNames(0)))).isEqualTo(18001);
    assertThat(port(staticCluster(b, BootstrapCommand.XDS_CLUSTER))).isEqualTo(18000);
  }

  @Test
  void filesModeReadsWhatThePublisherWrites() throws Exception {
    Path dir = Path.of("/var/lib/meridian/published");
    Bootstrap b = parse(run("bootstrap", "envoy", "--mode", "files", "--publish-dir", dir.toString(),
        "--group", "canary"));
    assertThat(b.getDynamicResources().getCdsConfig().getPathConfigSource().getPath()).isEqualTo(
        FilePublisher.file(dir, "canary", ResourceType.CLUSTER, FilePublisher.Format.YAML).toString());
    assertThat(b.getDynamicResources().getLdsConfig().getPathConfigSource().getWatchedDirectory().getPath())
        .isEqualTo(dir.resolve("canary").toString());
    assertThat(b.getStaticResources().getClustersCount()).isZero();
  }

  @Test
  void hostNamesAreResolvedByDns() throws Exception {
    Bootstrap b = parse(run("bootstrap", "envoy", "--mode", "ads", "--server", "meridian.internal:18000"));
    assertThat(staticCluster(b, BootstrapCommand.XDS_CLUSTER).getType()).isEqualTo(Cluster.DiscoveryType.STRICT_DNS);
  }

  @Test
  void badInputIsAUsageError() {
    PrintStream err = System.err;
    System.setErr(new PrintStream(new ByteArrayOutputStream()));
    try {
      assertThat(Main.run("bootstrap", "envoy", "--mode", "carrier-pigeon")).isEqualTo(2);
      assertThat(Main.run("bootstrap", "envoy", "--mode", "files")).isEqualTo(2);
      assertThat(Main.run("bootstrap", "envoy", "--mode", "ads", "--server", "nowhere")).isEqualTo(2);
    } finally {
      System.setErr(err);
    }
  }
}
