package dev.meridian.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.meridian.testing.TestCerts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** gRFC A27 bootstrap parsing. */
class BootstrapTest {
  static final String VALID = """
      {
        "xds_servers": [{
          "server_uri": "127.0.0.1:18000",
          "channel_creds": [{"type": "google_default"}, {"type": "insecure"}],
          "server_features": ["xds_v3", "ignore_resource_deletion"]
        }],
        "node": {
          "id": "node-1", "cluster": "c1",
          "locality": {"zone": "z1"},
          "metadata": {"k": "v"}
        },
        "authorities": {
          "xds.example.com": {
            "client_listener_resource_name_template": "xdstp://xds.example.com/l/%s",
            "xds_servers": [{"server_uri": "other:443", "channel_creds": [{"type": "tls"}]}]
          }
        }
      }
      """;

  @Test
  void parsesServersNodeAndAuthorities() throws Exception {
    Bootstrap b = Bootstrap.fromJson(VALID);
    assertThat(b.primary().serverUri()).isEqualTo("127.0.0.1:18000");
    assertThat(b.primary().channelCreds()).isEqualTo(Bootstrap.ChannelCreds.INSECURE);
    assertThat(b.primary().ignoreResourceDeletion()).isTrue();
    assertThat(b.node().getId()).isEqualTo("node-1");
    assertThat(b.node().getCluster()).isEqualTo("c1");
    assertThat(b.node().getLocality().getZone()).isEqualTo("z1");
    assertThat(b.node().getMetadata().getFieldsMap().get("k").getStringValue()).isEqualTo("v");
    assertThat(b.node().getUserAgentName()).isEqualTo("meridian-client");
    Bootstrap.Authority a = b.authorities().get("xds.example.com");
    assertThat(a.clientListenerResourceNameTemplate()).startsWith("xdstp://");
    assertThat(a.servers().get(0).channelCreds()).isEqualTo(Bootstrap.ChannelCreds.TLS);
  }

  // gRFC A71 "Change xDS Bootstrap to handle multiple xDS configuration servers": every server, in
  // the bootstrap's order, each with its own channel_creds and server_features.
  @Test
  void severalServersAreKeptInPriorityOrderPerAuthority() throws Exception {
    Bootstrap b = Bootstrap.fromJson("""
        {
          "xds_servers": [
            {"server_uri": "a:18000", "channel_creds": [{"type": "insecure"}],
             "server_features": ["ignore_resource_deletion"]},
            {"server_uri": "b:18000", "channel_creds": [{"type": "insecure"}]}
          ],
          "authorities": {
            "own.example": {"xds_servers": [
              {"server_uri": "c:443", "channel_creds": [{"type": "insecure"}]},
              {"server_uri": "d:443", "channel_creds": [{"type": "insecure"}]}]},
            "shared.example": {}
          }
        }
        """);
    assertThat(b.servers()).extracting(Bootstrap.ServerInfo::serverUri)
        .containsExactly("a:18000", "b:18000");
    assertThat(b.servers().get(0).ignoreResourceDeletion()).isTrue();
    assertThat(b.servers().get(1).ignoreResourceDeletion()).isFalse();
    assertThat(b.serversFor("plain")).contains(b.servers());
    assertThat(b.serversFor("xdstp://own.example/envoy.config.cluster.v3.Cluster/x").orElseThrow())
        .extracting(Bootstrap.ServerInfo::serverUri).containsExactly("c:443", "d:443");
    assertThat(b.serversFor("xdstp://shared.example/envoy.config.cluster.v3.Cluster/x"))
        .contains(b.servers());
    assertThat(b.serversFor("xdstp://unknown.example/envoy.config.cluster.v3.Cluster/x")).isEmpty();
  }

  @Test
  void missingServersFailsNamingTheField() {
    assertThatThrownBy(() -> Bootstrap.fromJson("{\"node\": {\"id\": \"x\"}}"))
        .isInstanceOf(BootstrapException.class)
        .hasMessageStartingWith("xds_servers:")
        .extracting(e -> ((BootstrapException) e).field()).isEqualTo("xds_servers");
  }

  @Test
  void missingServerUriFailsNamingTheField() {
    assertThatThrownBy(() -> Bootstrap.fromJson(
        "{\"xds_servers\": [{\"channel_creds\": [{\"type\": \"insecure\"}]}]}"))
        .hasMessageStartingWith("xds_servers[0].server_uri:");
  }

  @Test
  void unsupportedChannelCredsFailNamingTheField() {
    assertThatThrownBy(() -> Bootstrap.fromJson(
        "{\"xds_servers\": [{\"server_uri\": \"a:1\", \"channel_creds\": [{\"type\": \"alts\"}]}]}"))
        .hasMessageStartingWith("xds_servers[0].channel_creds:").hasMessageContaining("alts");
  }

  @Test
  void badNodeFailsNamingTheField() {
    assertThatThrownBy(() -> Bootstrap.fromJson("{\"xds_servers\": [{\"server_uri\": \"a:1\", "
        + "\"channel_creds\": [{\"type\": \"insecure\"}]}], \"node\": {\"id\": 5, \"locality\": 3}}"))
        .hasMessageStartingWith("node:");
  }

  @Test
  void invalidJsonFails() {
    assertThatThrownBy(() -> Bootstrap.fromJson("{not json")).isInstanceOf(BootstrapException.class);
  }

  @Test
  void environmentPrefersTheFileThenTheInlineConfig(@TempDir Path dir) throws Exception {
    Path f = dir.resolve("bootstrap.json");
    Files.writeString(f, VALID);
    assertThat(Bootstrap.fromEnvironment(Map.of(Bootstrap.ENV_FILE, f.toString(),
        Bootstrap.ENV_CONFIG, "{}")).node().getId()).isEqualTo("node-1");
    assertThat(Bootstrap.fromEnvironment(Map.of(Bootstrap.ENV_CONFIG, VALID)).node().getId())
        .isEqualTo("node-1");
    assertThatThrownBy(() -> Bootstrap.fromEnvironment(Map.of()))
        .hasMessageContaining(Bootstrap.ENV_FILE).hasMessageContaining(Bootstrap.ENV_CONFIG);
  }

  // gRFC A65: tls channel creds with files.

  /** A bootstrap whose first server has {@code {"type": "tls", "config": CONFIG}}. */
  static String tls(String config) {
    return "{\"xds_servers\": [{\"server_uri\": \"xds.example.com:443\", \"channel_creds\": "
        + "[{\"type\": \"tls\", \"config\": " + config + "}, {\"type\": \"insecure\"}]}]}";
  }

  static String json(Path p) {
    return new com.google.gson.Gson().toJson(p.toString());
  }

  @Test
  void tlsCredsWithFilesAreReadAndChecked(@TempDir Path dir) throws Exception {
    TestCerts.Ca ca = TestCerts.ca("ca");
    Path caFile = ca.writeCert(dir.resolve("ca.crt"));
    TestCerts.Written id = ca.leaf("client").issue().write(dir, "client");
    Bootstrap b = Bootstrap.fromJson(tls("{\"ca_certificate_file\": " + json(caFile)
        + ", \"certificate_file\": " + json(id.cert()) + ", \"private_key_file\": "
        + json(id.key()) + ", \"refresh_interval\": \"0.5s\"}"));
    assertThat(b.primary().channelCreds()).isEqualTo(Bootstrap.ChannelCreds.TLS);
    assertThat(b.primary().tls()).isEqualTo(
        new TlsConfig(caFile, id.cert(), id.key(), java.time.Duration.ofMillis(500)));
    assertThat(b.primary().tls().mutual()).isTrue();
  }

  @Test
  void tlsWithoutConfigUsesTheSystemRootsAndRefreshesEveryTenMinutes() throws Exception {
    Bootstrap b = Bootstrap.fromJson(tls("{}"));
    assertThat(b.primary().tls()).isEqualTo(TlsConfig.systemRoots());
    assertThat(b.primary().tls().refreshInterval()).isEqualTo(java.time.Duration.ofMinutes(10));
    assertThat(b.primary().tls().mutual()).isFalse();
  }

  @Test
  void aCertificateWithoutItsKeyFailsNamingTheMissingField(@TempDir Path dir) {
    Path cert = TestCerts.ca("ca").leaf("c").issue().writeCert(dir.resolve("c.crt"));
    assertThatThrownBy(() -> Bootstrap.fromJson(tls("{\"certificate_file\": " + json(cert) + "}")))
        .isInstanceOfSatisfying(BootstrapException.class, e -> assertThat(e.field())
            .isEqualTo("xds_servers[0].channel_creds[0].config.private_key_file"))
        .hasMessageContaining("is required with certificate_file");
  }

  @Test
  void aMissingTlsFileFailsNamingTheFieldAndTheFile(@TempDir Path dir) {
    Path missing = dir.resolve("nope.crt");
    assertThatThrownBy(() -> Bootstrap.fromJson(tls("{\"ca_certificate_file\": "
        + json(missing) + "}")))
        .hasMessage("xds_servers[0].channel_creds[0].config.ca_certificate_file: " + missing
            + ": no such file");
  }

  @Test
  void aKeyOfAnotherCertificateFailsNamingTheKeyFile(@TempDir Path dir) {
    TestCerts.Ca ca = TestCerts.ca("ca");
    Path cert = ca.leaf("a").issue().writeCert(dir.resolve("a.crt"));
    Path key = ca.leaf("b").issue().writeKey(dir.resolve("b.key"));
    assertThatThrownBy(() -> Bootstrap.fromJson(tls("{\"certificate_file\": " + json(cert)
        + ", \"private_key_file\": " + json(key) + "}")))
        .hasMessage("xds_servers[0].channel_creds[0].config.private_key_file: " + key
            + ": is not the private key of the certificate in " + cert);
  }

  @Test
  void aCertificateFileThatIsNotPemFailsNamingIt(@TempDir Path dir) throws Exception {
    Path ca = Files.writeString(dir.resolve("ca.crt"), "hello");
    assertThatThrownBy(() -> Bootstrap.fromJson(tls("{\"ca_certificate_file\": " + json(ca) + "}")))
        .hasMessageStartingWith("xds_servers[0].channel_creds[0].config.ca_certificate_file: "
            + ca + ": ");
  }

  @Test
  void aTraditionalKeyFailsSayingHowToConvertIt(@TempDir Path dir) throws Exception {
    TestCerts.Leaf leaf = TestCerts.ca("ca").leaf("c").issue();
    Path cert = leaf.writeCert(dir.resolve("c.crt"));
    Path key = Files.writeString(dir.resolve("c.key"),
        "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n");
    assertThatThrownBy(() -> Bootstrap.fromJson(tls("{\"certificate_file\": " + json(cert)
        + ", \"private_key_file\": " + json(key) + "}")))
        .hasMessageContaining(key + ": holds a BEGIN EC PRIVATE KEY key; convert it to PKCS#8")
        .hasMessageContaining("openssl pkcs8 -topk8 -nocrypt");
  }

  @Test
  void aBadRefreshIntervalFailsNamingTheField() {
    for (String bad : List.of("\"10 minutes\"", "\"0s\"", "\"-5s\"", "600")) {
      assertThatThrownBy(() -> Bootstrap.fromJson(tls("{\"refresh_interval\": " + bad + "}")))
          .as(bad)
          .isInstanceOfSatisfying(BootstrapException.class, e -> assertThat(e.field())
              .isEqualTo("xds_servers[0].channel_creds[0].config.refresh_interval"));
    }
  }

  @Test
  void tlsConfigMustBeAnObject() {
    assertThatThrownBy(() -> Bootstrap.fromJson(tls("\"/etc/ca.pem\"")))
        .hasMessage("xds_servers[0].channel_creds[0].config: must be an object");
  }

  // Issue 25, found by fuzzing: a NUL in a file name threw InvalidPathException out of fromJson.
  @Test
  void aFileNameWithANulCharacterIsRefusedNamingTheField() {
    String nulInName = "{\"ca_certificate_file\": \"/etc/ca\\u0000.pem\"}";
    assertThatThrownBy(() -> Bootstrap.fromJson(tls(nulInName)))
        .isInstanceOfSatisfying(BootstrapException.class, e -> assertThat(e.field())
            .isEqualTo("xds_servers[0].channel_creds[0].config.ca_certificate_file"));
  }

  // Issue 25, found by fuzzing: a channel_creds type that is not a string threw
  // UnsupportedOperationException out of fromJson.
  @Test
  void aChannelCredsTypeThatIsNotAStringIsRefusedNamingTheField() {
    assertThatThrownBy(() -> Bootstrap.fromJson("{\"xds_servers\": [{\"server_uri\": \"a:1\", "
        + "\"channel_creds\": [{\"type\": {\"tls\": 1}}]}]}"))
        .isInstanceOfSatisfying(BootstrapException.class, e -> assertThat(e.field())
            .isEqualTo("xds_servers[0].channel_creds[0].type"));
  }
}
