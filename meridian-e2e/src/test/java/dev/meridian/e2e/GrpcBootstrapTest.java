package dev.meridian.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.cli.Main;
import dev.meridian.testing.TestCerts;
import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.TlsChannelCredentials;
import io.grpc.internal.JsonParser;
import io.grpc.xds.InternalGrpcBootstrapperImpl;
import io.grpc.xds.client.Bootstrapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What {@code meridian bootstrap grpc} prints, read by grpc-java 1.85.1's own parser (issue 20). */
class GrpcBootstrapTest {
  @TempDir
  Path dir;

  /** The bootstrap the command prints, parsed by grpc-java as GRPC_XDS_BOOTSTRAP would be. */
  @SuppressWarnings("unchecked")
  static Bootstrapper.BootstrapInfo grpcJavaReads(String... args) throws Exception {
    PrintStream stdout = System.out;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      String[] all = new String[args.length + 2];
      all[0] = "bootstrap";
      all[1] = "grpc";
      System.arraycopy(args, 0, all, 2, args.length);
      assertThat(Main.run(all)).isZero();
    } finally {
      System.setOut(stdout);
    }
    return InternalGrpcBootstrapperImpl.parseBootstrap(
        (Map<String, ?>) JsonParser.parse(captured.toString(StandardCharsets.UTF_8)));
  }

  /** grpc-java keeps a server's channel credentials as its implementation-specific config. */
  static ChannelCredentials channelCredentials(Bootstrapper.BootstrapInfo info) {
    return (ChannelCredentials) info.servers().get(0).implSpecificConfig();
  }

  @Test
  void grpcJavaReadsTheInsecureBootstrap() throws Exception {
    Bootstrapper.BootstrapInfo info = grpcJavaReads("--server", "127.0.0.1:18000", "--node-id",
        "greeter-client-1", "--node-cluster", "example");
    assertThat(info.servers()).hasSize(1);
    assertThat(info.servers().get(0).target()).isEqualTo("127.0.0.1:18000");
    assertThat(info.node().getId()).isEqualTo("greeter-client-1");
    assertThat(info.node().toEnvoyProtoNode().getCluster()).isEqualTo("example");
    assertThat(channelCredentials(info)).isInstanceOf(InsecureChannelCredentials.class);
  }

  /**
   * grpc-java 1.85.1 registers the {@code tls} channel creds type, but its provider
   * ({@code TlsXdsCredentialsProvider}) ignores the gRFC A65 config: plain TLS with the JVM's
   * default trust roots and no client certificate. When grpc-java implements A65 this fails:
   * then its client presents the certificate, and this test should say so.
   */
  @Test
  void grpcJava1851TakesTheTlsCredsButNotTheirFiles() throws Exception {
    TestCerts.Ca ca = TestCerts.ca("ca");
    Path caFile = ca.writeCert(dir.resolve("ca.crt"));
    TestCerts.Written id = ca.leaf("greeter-client").uri("spiffe://meridian.test/greeter").issue()
        .write(dir, "client");
    Bootstrapper.BootstrapInfo info = grpcJavaReads("--server", "127.0.0.1:18000", "--node-id",
        "greeter-client-1", "--tls-ca", caFile.toString(), "--tls-cert", id.cert().toString(),
        "--tls-key", id.key().toString());
    assertThat(info.servers().get(0).target()).isEqualTo("127.0.0.1:18000");
    ChannelCredentials creds = channelCredentials(info);
    assertThat(creds).isInstanceOf(TlsChannelCredentials.class);
    TlsChannelCredentials tls = (TlsChannelCredentials) creds;
    assertThat(tls.getKeyManagers()).as("client certificate").isNull();
    assertThat(tls.getCertificateChain()).as("client certificate").isNull();
    assertThat(tls.getTrustManagers()).as("trust roots").isNull();
    assertThat(tls.getRootCertificates()).as("trust roots").isNull();
  }
}
