package dev.meridian.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
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
}
