package dev.meridian.internal.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.meridian.internal.protocol.SecretAccess;
import dev.meridian.internal.protocol.ServedConfig;
import io.envoyproxy.envoy.config.core.v3.Node;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Issue 20's config keys: {@code match.identity} on groups and {@code secret_access}. */
class TrustConfigTest {
  @TempDir Path dir;

  private ServedConfig load(String yaml) throws Exception {
    Path p = dir.resolve("c.yaml");
    Files.writeString(p, yaml);
    return new ConfigLoader().load(p).config();
  }

  private static Node node(String id) {
    return Node.newBuilder().setId(id).build();
  }

  @Test
  void groupMatchTakesAnIdentityGlobThatANodeIdClaimMustProve() throws Exception {
    ServedConfig c = load("""
        groups:
          - name: payments
            match: { node_id: "payments-*", identity: "spiffe://example.org/ns/payments/*" }
        """);
    assertThat(c.place(node("payments-1"), "spiffe://example.org/ns/payments/sa/api").group())
        .isEqualTo("payments");
    ServedConfig.Placement refused = c.place(node("payments-1"), "spiffe://example.org/ns/orders/sa/api");
    assertThat(refused.isDenied()).isTrue();
    assertThat(refused.denied()).contains("payments-1", "spiffe://example.org/ns/orders/sa/api");
    assertThat(c.place(node("web-1"), null).group()).isEqualTo(ServedConfig.DEFAULT_GROUP);
  }

  @Test
  void secretAccessRulesAreRead() throws Exception {
    ServedConfig c = load("""
        secret_access:
          - secrets: "payments-*"
            identities: ["spiffe://example.org/ns/payments/*", "spiffe://example.org/ns/ops/*"]
        """);
    assertThat(c.secretAccess().rules()).containsExactly(new SecretAccess.Rule("payments-*",
        List.of("spiffe://example.org/ns/payments/*", "spiffe://example.org/ns/ops/*")));
    assertThat(c.secretAccess().allows("payments-key", "spiffe://example.org/ns/ops/sa/x", false)).isTrue();
    assertThat(c.secretAccess().allows("payments-key", "spiffe://example.org/ns/web/sa/x", false)).isFalse();
    assertThat(c.secretAccess().allows("other", "spiffe://example.org/ns/web/sa/x", false)).isTrue();
    assertThat(c.secretAccess().allows("other", null, false)).isFalse();
  }

  @Test
  void badSecretAccessIsNamedAtItsLine() throws Exception {
    Path p = dir.resolve("bad.yaml");
    Files.writeString(p, """
        secret_access:
          - secrets: "payments-*"
          - identities: []
          - secrets: x
            identitys: [a]
        """);
    assertThatThrownBy(() -> new ConfigLoader().load(p)).isInstanceOfSatisfying(ConfigException.class,
        e -> assertThat(e.problems())
            .anyMatch(m -> m.contains(":2:") && m.contains("secret_access[0]: missing 'identities'"))
            .anyMatch(m -> m.contains("secret_access[1]: 'identities' must be a non-empty list"))
            .anyMatch(m -> m.contains("unknown key 'identitys'") && m.contains("did you mean `identities`")));
  }

  @Test
  void unknownMatchKeyListsIdentity() throws Exception {
    Path p = dir.resolve("bad.yaml");
    Files.writeString(p, """
        groups:
          - name: g
            match: { identiy: "spiffe://*" }
        """);
    assertThatThrownBy(() -> new ConfigLoader().load(p))
        .hasMessageContaining("expected node_id, node_cluster or identity")
        .hasMessageContaining("did you mean `identity`");
  }

  @Test
  void anIdentityGlobIsAUriGlobWithSchemeSlashesElseADnsGlobAndOneThatIsNeitherIsRefused()
      throws Exception {
    ServedConfig c = load("""
        groups:
          - name: hosts
            match: { identity: "*.hosts.example.org" }
        """);
    assertThat(c.place(node("a"), "api.hosts.example.org").group()).isEqualTo("hosts");
    // A URI identity never falls to a DNS glob, even one it would spell out.
    assertThat(c.place(node("a"), "spiffe://x/api.hosts.example.org").group())
        .isEqualTo(ServedConfig.DEFAULT_GROUP);
    Path p = dir.resolve("bad.yaml");
    Files.writeString(p, """
        groups:
          - name: g
            match: { identity: "spiffe:/example.org/*" }
        secret_access:
          - secrets: "x-*"
            identities: ["ops@example.org"]
        """);
    assertThatThrownBy(() -> new ConfigLoader().load(p)).isInstanceOfSatisfying(ConfigException.class,
        e -> assertThat(e.problems())
            .anyMatch(m -> m.contains("match.identity") && m.contains("'spiffe:/example.org/*' is "
                + "neither a URI glob"))
            .anyMatch(m -> m.contains("secret_access[0]") && m.contains("'ops@example.org'")));
  }
}
