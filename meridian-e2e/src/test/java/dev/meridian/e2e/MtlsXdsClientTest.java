package dev.meridian.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.internal.server.MeridianServer;
import dev.meridian.testing.TestCerts;
import io.grpc.ChannelCredentials;
import io.grpc.TlsChannelCredentials;
import io.grpc.xds.XdsCredentialsProvider;
import io.grpc.xds.E2eXdsAccess;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 20: a real grpc-java 1.85.1 xDS client, given a gRFC A65 bootstrap (channel_creds
 * {@code tls} with certificate files), routes RPCs through Meridian serving xDS over mTLS, and
 * Meridian knows it by its certificate's SPIFFE ID.
 *
 * <p>grpc-java 1.85.1 registers a {@code tls} channel-credentials type for bootstraps, but its
 * provider ignores A65's {@code config} (it returns TLS with the system roots and no client
 * certificate), so against a private CA with client certificates it cannot connect. The test
 * therefore registers, in grpc-java's registry of bootstrap credentials, a {@code tls}
 * provider of higher priority that reads A65's file fields with grpc-java's channel-credentials API
 * ({@link TlsChannelCredentials}): the bootstrap is A65's, the TLS is grpc-java's own.
 */
@Timeout(90)
class MtlsXdsClientTest {
  static final String IDENTITY = "spiffe://example.org/ns/greeter/sa/client";

  @TempDir Path dir;
  Greeter.Backend v1;
  final XdsCredentialsProvider a65 = new A65Tls();

  TestCerts.Ca ca;
  Path caFile;

  @BeforeEach
  void start() throws Exception {
    v1 = new Greeter.Backend("v1");
    ca = TestCerts.ca("e2e-ca");
    caFile = ca.writeCert(dir.resolve("ca.crt"));
    E2eXdsAccess.registerCredentials(a65);
  }

  @AfterEach
  void stop() throws Exception {
    E2eXdsAccess.deregisterCredentials(a65);
    v1.close();
  }

  @Test
  void grpcJavaWithAnA65BootstrapRoutesRpcsThroughMeridianOverMtls() throws Exception {
    TestCerts.Written client = ca.leaf("greeter-client").uri(IDENTITY).issue().write(dir, "client");
    try (Meridian meridian = meridianOverMtls()) {
      Map<String, Object> bootstrap = Map.of(
          "xds_servers", List.of(Map.of(
              "server_uri", "localhost:" + meridian.xdsPort(),
              "channel_creds", List.of(Map.of("type", "tls", "config", Map.of(
                  "ca_certificate_file", caFile.toString(),
                  "certificate_file", client.cert().toString(),
                  "private_key_file", client.key().toString()))),
              "server_features", List.of("xds_v3"))),
          "node", Map.of("id", "e2e-mtls", "cluster", "e2e"));
      try (XdsTestClient grpc = new XdsTestClient(bootstrap, "greeter")) {
        assertThat(grpc.helloWhenReady()).isEqualTo("v1");
        String clients = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
            "http://127.0.0.1:" + meridian.server().httpPort() + "/clients")).build(),
            HttpResponse.BodyHandlers.ofString()).body();
        assertThat(clients).contains("\"identity\": \"" + IDENTITY + "\"")
            .contains("\"node_id\": \"e2e-mtls\"");
      }
    }
  }

  @Test
  void grpcJavaWithoutAClientCertificateIsNotServed() throws Exception {
    try (Meridian meridian = meridianOverMtls()) {
      Map<String, Object> bootstrap = Map.of(
          "xds_servers", List.of(Map.of(
              "server_uri", "localhost:" + meridian.xdsPort(),
              "channel_creds", List.of(Map.of("type", "tls", "config", Map.of(
                  "ca_certificate_file", caFile.toString()))),
              "server_features", List.of("xds_v3"))),
          "node", Map.of("id", "e2e-anonymous", "cluster", "e2e"));
      try (XdsTestClient grpc = new XdsTestClient(bootstrap, "greeter")) {
        assertThat(grpc.helloOrError()).startsWith("error:");
        assertThat(meridian.server().hub().streamCount()).isZero();
      }
    }
  }

  /** Meridian serving the greeter over mTLS with a certificate of the test CA. */
  Meridian meridianOverMtls() throws Exception {
    TestCerts.Written server = ca.leaf("meridian").loopback().issue().write(dir, "server");
    return Meridian.start(dir, Config.service("greeter", Config.toCluster("greeter-v1"))
        .cluster("greeter-v1", v1.port()),
        new MeridianServer.Options.Tls(server.cert(), server.key(), caFile));
  }

  /**
   * gRFC A65's {@code tls} channel credentials: {@code ca_certificate_file} (else the system
   * roots), {@code certificate_file} and {@code private_key_file} (the client's identity).
   */
  static final class A65Tls extends XdsCredentialsProvider {
    @Override
    protected ChannelCredentials newChannelCredentials(Map<String, ?> config) {
      TlsChannelCredentials.Builder b = TlsChannelCredentials.newBuilder();
      try {
        if (config != null && config.get("ca_certificate_file") instanceof String ca) {
          b.trustManager(new File(ca));
        }
        if (config != null && config.get("certificate_file") instanceof String cert
            && config.get("private_key_file") instanceof String key) {
          b.keyManager(new File(cert), new File(key));
        }
      } catch (IOException e) {
        return null; // grpc-java reports the bootstrap's credentials as unusable
      }
      return b.build();
    }

    @Override
    protected String getName() {
      return "tls";
    }

    @Override
    public boolean isAvailable() {
      return true;
    }

    @Override
    public int priority() {
      return 10; // above grpc-java's own tls provider (5)
    }
  }
}
