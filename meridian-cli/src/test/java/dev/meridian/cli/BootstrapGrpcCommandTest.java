package dev.meridian.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.meridian.client.Bootstrap;
import dev.meridian.client.TlsConfig;
import dev.meridian.testing.TestCerts;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code meridian bootstrap grpc} (issue 20): a gRFC A27 bootstrap, with gRFC A65 tls channel
 * creds when asked, that Meridian's own bootstrap parser reads back as written.
 */
class BootstrapGrpcCommandTest {
  @TempDir
  Path dir;

  static String run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int rc = Main.commandLine().setOut(new PrintWriter(out)).setErr(new PrintWriter(err))
        .execute(args);
    assertThat(rc).as(err.toString()).isZero();
    return out.toString();
  }

  @Test
  void withoutTlsTheChannelCredsAreInsecure() throws Exception {
    String json = run("bootstrap", "grpc", "--server", "127.0.0.1:18000", "--node-id",
        "greeter-client-1", "--node-cluster", "example");
    assertThat(JsonParser.parseString(json)).isEqualTo(JsonParser.parseString("""
        {"xds_servers": [{"server_uri": "127.0.0.1:18000",
                          "channel_creds": [{"type": "insecure"}],
                          "server_features": ["xds_v3"]}],
         "node": {"id": "greeter-client-1", "cluster": "example"}}
        """));
    Bootstrap b = Bootstrap.fromJson(json);
    assertThat(b.primary().serverUri()).isEqualTo("127.0.0.1:18000");
    assertThat(b.primary().channelCreds()).isEqualTo(Bootstrap.ChannelCreds.INSECURE);
    assertThat(b.primary().serverFeatures()).containsExactly("xds_v3");
    assertThat(b.node().getId()).isEqualTo("greeter-client-1");
    assertThat(b.node().getCluster()).isEqualTo("example");
  }

  @Test
  void withTlsTheChannelCredsAreA65TlsNamingTheFiles() throws Exception {
    TestCerts.Ca ca = TestCerts.ca("ca");
    Path caFile = ca.writeCert(dir.resolve("ca.crt"));
    TestCerts.Written id = ca.leaf("greeter-client").uri("spiffe://meridian.test/greeter")
        .issue().write(dir, "client");
    String json = run("bootstrap", "grpc", "--server", "meridian.internal:18000", "--node-id", "n",
        "--tls-ca", caFile.toString(), "--tls-cert", id.cert().toString(), "--tls-key",
        id.key().toString());
    JsonObject creds = JsonParser.parseString(json).getAsJsonObject().getAsJsonArray("xds_servers")
        .get(0).getAsJsonObject().getAsJsonArray("channel_creds").get(0).getAsJsonObject();
    assertThat(creds.get("type").getAsString()).isEqualTo("tls");
    assertThat(creds.getAsJsonObject("config").keySet())
        .containsExactly("ca_certificate_file", "certificate_file", "private_key_file");
    assertThat(JsonParser.parseString(json).getAsJsonObject().getAsJsonArray("xds_servers").get(0)
        .getAsJsonObject().getAsJsonArray("channel_creds")).as("no insecure fallback").hasSize(1);

    Bootstrap b = Bootstrap.fromJson(json); // reads and checks the files, as a client would
    assertThat(b.primary().channelCreds()).isEqualTo(Bootstrap.ChannelCreds.TLS);
    assertThat(b.primary().tls()).isEqualTo(new TlsConfig(caFile, id.cert(), id.key()));
  }

  @Test
  void aCaAloneIsTlsWithoutAClientCertificate() throws Exception {
    Path caFile = TestCerts.ca("ca").writeCert(dir.resolve("ca.crt"));
    String json = run("bootstrap", "grpc", "--server", "127.0.0.1:18000", "--node-id", "n",
        "--tls-ca", caFile.toString());
    TlsConfig tls = Bootstrap.fromJson(json).primary().tls();
    assertThat(tls).isEqualTo(new TlsConfig(caFile, null, null));
    assertThat(tls.mutual()).isFalse();
  }

  @Test
  void relativeFilesAreWrittenAbsolute() {
    String json = run("bootstrap", "grpc", "--server", "127.0.0.1:18000", "--node-id", "n",
        "--tls-ca", "certs/ca.crt");
    assertThat(json).contains(new com.google.gson.Gson().toJson(
        Path.of("certs/ca.crt").toAbsolutePath().toString()));
    assertThat(List.of(json.split("\n"))).doesNotContain("\"node\": {}");
  }
}
