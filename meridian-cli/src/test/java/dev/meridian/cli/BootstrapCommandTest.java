package dev.meridian.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.internal.protocol.EnvoyTypeRegistry;
import dev.meridian.xds.ResourceType;
import dev.meridian.internal.server.FilePublisher;
import io.envoyproxy.envoy.config.bootstrap.v3.Bootstrap;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.ApiConfigSource;
import io.envoyproxy.envoy.config.core.v3.ConfigSource;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.CommonTlsContext;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.SubjectAltNameMatcher;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext;
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
  void restModePollsTheRestPort() throws Exception {
    // Issue 20: REST has its own port (serve --rest-port), 18002 by convention; not the admin port.
    Bootstrap b = parse(run("bootstrap", "envoy", "--mode", "rest"));
    ApiConfigSource cds = b.getDynamicResources().getCdsConfig().getApiConfigSource();
    assertThat(cds.getApiType()).isEqualTo(ApiConfigSource.ApiType.REST);
    assertThat(port(staticCluster(b, cds.getClusterNames(0)))).isEqualTo(18002);
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

  // Issue 20: Envoy's connections to Meridian over TLS.

  static final String[] TLS = {"--tls-ca", "/etc/meridian/ca.crt", "--tls-cert",
      "/etc/meridian/envoy.crt", "--tls-key", "/etc/meridian/envoy.key"};

  static String[] withTls(String... args) {
    String[] all = java.util.Arrays.copyOf(args, args.length + TLS.length);
    System.arraycopy(TLS, 0, all, args.length, TLS.length);
    return all;
  }

  static UpstreamTlsContext upstreamTls(Cluster c) throws Exception {
    assertThat(c.getTransportSocket().getName()).isEqualTo("envoy.transport_sockets.tls");
    return c.getTransportSocket().getTypedConfig().unpack(UpstreamTlsContext.class);
  }

  @ParameterizedTest
  @ValueSource(strings = {"ads", "delta-ads", "xds", "delta-xds"})
  void grpcModesWithTlsConnectOverMutualTls(String mode) throws Exception {
    Bootstrap b = parse(run(withTls("bootstrap", "envoy", "--mode", mode, "--server",
        "meridian.internal:18000")));
    UpstreamTlsContext tls = upstreamTls(staticCluster(b, BootstrapCommand.XDS_CLUSTER));
    assertThat(tls.getSni()).isEqualTo("meridian.internal");
    CommonTlsContext common = tls.getCommonTlsContext();
    assertThat(common.getTlsCertificates(0).getCertificateChain().getFilename())
        .isEqualTo("/etc/meridian/envoy.crt");
    assertThat(common.getTlsCertificates(0).getPrivateKey().getFilename())
        .isEqualTo("/etc/meridian/envoy.key");
    assertThat(common.getValidationContext().getTrustedCa().getFilename())
        .isEqualTo("/etc/meridian/ca.crt");
    // Envoy checks no name unless told; and gRPC servers want HTTP/2 negotiated by ALPN.
    assertThat(common.getValidationContext().getMatchTypedSubjectAltNames(0).getSanType())
        .isEqualTo(SubjectAltNameMatcher.SanType.DNS);
    assertThat(common.getValidationContext().getMatchTypedSubjectAltNames(0).getMatcher()
        .getExact()).isEqualTo("meridian.internal");
    assertThat(common.getAlpnProtocolsList()).containsExactly("h2");
  }

  @Test
  void restModeWithTlsSecuresBothClusters() throws Exception {
    Bootstrap b = parse(run(withTls("bootstrap", "envoy", "--mode", "rest", "--server",
        "rest.meridian.internal:18443", "--xds-server", "10.0.0.7:18000")));
    UpstreamTlsContext rest = upstreamTls(staticCluster(b, BootstrapCommand.HTTP_CLUSTER));
    assertThat(rest.getSni()).isEqualTo("rest.meridian.internal");
    assertThat(rest.getCommonTlsContext().getAlpnProtocolsList()).isEmpty(); // HTTP/1.1
    assertThat(rest.getCommonTlsContext().getTlsCertificatesCount()).isEqualTo(1);
    UpstreamTlsContext xds = upstreamTls(staticCluster(b, BootstrapCommand.XDS_CLUSTER));
    assertThat(xds.getSni()).as("SNI carries host names only").isEmpty();
    assertThat(xds.getCommonTlsContext().getValidationContext().getMatchTypedSubjectAltNames(0))
        .satisfies(m -> {
          assertThat(m.getSanType()).isEqualTo(SubjectAltNameMatcher.SanType.IP_ADDRESS);
          assertThat(m.getMatcher().getExact()).isEqualTo("10.0.0.7");
        });
  }

  @Test
  void aCaAloneIsTlsWithoutAClientCertificate() throws Exception {
    Bootstrap b = parse(run("bootstrap", "envoy", "--mode", "ads", "--tls-ca", "/etc/ca.crt"));
    CommonTlsContext common = upstreamTls(staticCluster(b, BootstrapCommand.XDS_CLUSTER))
        .getCommonTlsContext();
    assertThat(common.getTlsCertificatesCount()).isZero();
    assertThat(common.getValidationContext().getTrustedCa().getFilename()).isEqualTo("/etc/ca.crt");
  }

  @Test
  void withoutTlsFlagsThereIsNoTransportSocket() throws Exception {
    Bootstrap b = parse(run("bootstrap", "envoy", "--mode", "ads"));
    assertThat(staticCluster(b, BootstrapCommand.XDS_CLUSTER).hasTransportSocket()).isFalse();
  }

  @Test
  void relativeTlsPathsAreMadeAbsolute() throws Exception {
    Bootstrap b = parse(run("bootstrap", "envoy", "--mode", "ads", "--tls-ca", "certs/ca.crt"));
    assertThat(upstreamTls(staticCluster(b, BootstrapCommand.XDS_CLUSTER)).getCommonTlsContext()
        .getValidationContext().getTrustedCa().getFilename())
        .isEqualTo(Path.of("certs/ca.crt").toAbsolutePath().toString());
  }
}
