package dev.meridian.internal.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.internal.protocol.ServedConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The checks serve runs on every load, which `meridian validate` runs too (issue 18, section 4). */
class ConfigChecksTest {
  @TempDir Path dir;

  /** A route to a cluster that does not exist. */
  static final String DANGLING = """
      resources:
        - "@type": type.googleapis.com/envoy.config.route.v3.RouteConfiguration
          name: routes
          virtual_hosts:
            - name: vh
              domains: ["*"]
              routes: [ { match: { prefix: "/" }, route: { cluster: nowhere } } ]
      """;

  ServedConfig load(String yaml) throws Exception {
    Path p = dir.resolve("c.yaml");
    Files.writeString(p, yaml);
    // serve's checks are under test; Envoy's rules (a stat_prefix, ...) are checked elsewhere
    return new ConfigLoader(RuleCheck.OFF).load(p).config();
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "resources: []\n", "groups: [{name: canary, match: {node_id: a}}]\n"})
  void aConfigWithNoResourcesAtAllIsAWarning(String yaml) throws Exception {
    ConfigChecks.Result r = ConfigChecks.run(load(yaml), ReferenceCheck.WARN);
    assertThat(r.rejected()).isFalse();
    assertThat(r.warnings()).singleElement().satisfies(f -> {
      assertThat(f.check()).isEqualTo(ConfigChecks.Check.EMPTY_CONFIG);
      assertThat(f.toString()).startsWith("empty config: no resources at all");
    });
  }

  @Test
  void anEmptyDirectoryIsAWarningToo() throws Exception {
    Path empty = Files.createDirectory(dir.resolve("conf.d"));
    assertThat(ConfigChecks.run(new ConfigLoader(RuleCheck.OFF).load(empty).config(), ReferenceCheck.OFF)
        .warnings()).extracting(ConfigChecks.Finding::check)
        .containsExactly(ConfigChecks.Check.EMPTY_CONFIG);
  }

  @Test
  void aDanglingReferenceIsAWarningUnderWarnAndARejectionUnderReject() throws Exception {
    ServedConfig c = load(DANGLING);
    ConfigChecks.Result warn = ConfigChecks.run(c, ReferenceCheck.WARN);
    assertThat(warn.rejected()).isFalse();
    assertThat(warn.warnings()).extracting(Object::toString).containsExactly(
        "dangling reference: group 'default': route configuration 'routes' virtual host 'vh' "
            + "routes to cluster 'nowhere', which does not exist");

    ConfigChecks.Result reject = ConfigChecks.run(c, ReferenceCheck.REJECT);
    assertThat(reject.rejected()).isTrue();
    assertThat(reject.warnings()).isEmpty();
    assertThat(reject.rejectionMessages()).containsExactly(
        "group 'default': route configuration 'routes' virtual host 'vh' routes to cluster "
            + "'nowhere', which does not exist");

    assertThat(ConfigChecks.run(c, ReferenceCheck.OFF)).isEqualTo(
        new ConfigChecks.Result(java.util.List.of(), java.util.List.of()));
  }

  @Test
  void grpcProfileFindingsAreWarningsOnlyForAConfigWithApiListeners() throws Exception {
    String maglev = "- {'@type': type.googleapis.com/envoy.config.cluster.v3.Cluster, name: c,"
        + " type: STATIC, lb_policy: MAGLEV}\n";
    // Without an API listener the config is not meant for proxyless gRPC: serve stays quiet.
    assertThat(ConfigChecks.run(load("resources:\n" + maglev), ReferenceCheck.WARN).warnings())
        .isEmpty();

    String apiListener = GrpcProfileTest.listener(GrpcProfileTest.ROUTER_ONLY)
        + GrpcProfileTest.routes("{match: {prefix: ''}, route: {cluster: c}}");
    ConfigChecks.Result r = ConfigChecks.run(load("resources:\n" + apiListener + maglev),
        ReferenceCheck.REJECT);
    assertThat(r.rejected()).isFalse();
    assertThat(r.warnings()).isNotEmpty().allSatisfy(f -> {
      assertThat(f.check()).isEqualTo(ConfigChecks.Check.GRPC_PROFILE);
      assertThat(f.toString()).startsWith("grpc profile: ERROR Cluster c: ");
    });
  }

  /** A Cluster with a client key inline, a Listener with session ticket keys inline, and the
   * same kind of key where it belongs: in a Secret. */
  static final String INLINE_KEYS = """
      resources:
        - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
          name: backend
          connect_timeout: 1s
          transport_socket:
            name: envoy.transport_sockets.tls
            typed_config:
              "@type": type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext
              common_tls_context:
                tls_certificates:
                  - certificate_chain: { inline_string: "CERT (public)" }
                    private_key: { inline_string: "CLIENT PRIVATE KEY" }
        - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
          name: by-file
          connect_timeout: 1s
          transport_socket:
            name: envoy.transport_sockets.tls
            typed_config:
              "@type": type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext
              common_tls_context:
                tls_certificates: [ { private_key: { filename: /etc/keys/client.key } } ]
        - "@type": type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret
          name: server-cert
          tls_certificate: { private_key: { inline_string: "SERVER PRIVATE KEY" } }
      groups:
        - name: edge
          match: { node_id: "edge-*" }
          resources:
            - "@type": type.googleapis.com/envoy.config.listener.v3.Listener
              name: https
              address: { socket_address: { address: 0.0.0.0, port_value: 443 } }
              filter_chains:
                - transport_socket:
                    name: envoy.transport_sockets.tls
                    typed_config:
                      "@type": type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext
                      session_ticket_keys: { keys: [ { inline_bytes: "AAAA" } ] }
      """;

  @Test
  void keyMaterialInlinedOutsideASecretIsAWarningNamingTheResourceAndFieldAndPointingToSds()
      throws Exception {
    ConfigChecks.Result r = ConfigChecks.run(load(INLINE_KEYS), ReferenceCheck.WARN);
    assertThat(r.rejected()).isFalse();
    assertThat(r.warnings()).filteredOn(f -> f.check() == ConfigChecks.Check.INLINE_KEY)
        .extracting(ConfigChecks.Finding::toString).containsExactlyInAnyOrder(
            "inline key material: group 'default': Cluster 'backend' inlines key material at "
                + "transport_socket.typed_config.common_tls_context.tls_certificates[0].private_key"
                + ".inline_string: it is sent to every client placed in the group, whatever its "
                + "identity; put it in a Secret and reference it by SDS (sds_config / "
                + "*_sds_secret_config(s))",
            "inline key material: group 'edge': Listener 'https' inlines key material at "
                + "filter_chains[0].transport_socket.typed_config.session_ticket_keys.keys[0]"
                + ".inline_bytes: it is sent to every client placed in the group, whatever its "
                + "identity; put it in a Secret and reference it by SDS (sds_config / "
                + "*_sds_secret_config(s))");
  }

  /**
   * A server's loads in turn share a memo of what each resource holds (a reload keeps the
   * resources it did not change, and only the changed ones are looked into): a key added by a
   * reload is found, one removed is forgotten, and the unchanged listener's is still reported.
   */
  @Test
  void loadsInTurnFindKeyMaterialInWhatChangedAndKeepFindingWhatDidNot() throws Exception {
    ConfigLoader loader = new ConfigLoader(RuleCheck.OFF);
    Path p = dir.resolve("c.yaml");
    InlineKeys.Memo memo = new InlineKeys.Memo();
    String withoutClusterKey = INLINE_KEYS.replace(
        "private_key: { inline_string: \"CLIENT PRIVATE KEY\" }",
        "private_key: { filename: /etc/keys/backend.key }");
    assertThat(withoutClusterKey).isNotEqualTo(INLINE_KEYS);
    int[] expected = {2, 1, 2};
    String[] texts = {INLINE_KEYS, withoutClusterKey, INLINE_KEYS};
    for (int i = 0; i < texts.length; i++) {
      Files.writeString(p, texts[i]);
      ConfigChecks.Result r = ConfigChecks.run(loader.load(p).config(), ReferenceCheck.WARN, false,
          memo);
      assertThat(r.warnings()).as("load " + (i + 1))
          .filteredOn(f -> f.check() == ConfigChecks.Check.INLINE_KEY).hasSize(expected[i])
          .anySatisfy(f -> assertThat(f.toString()).contains("Listener 'https'"));
    }
  }

  /**
   * Identity globs are typed: {@code *} matches host names only. A config written when it matched
   * SPIFFE IDs too would now turn them away without a word, so each such glob is a warning saying
   * how to write what was meant.
   */
  @Test
  void anIdentityGlobOfWildcardsAloneIsAWarningThatItNoLongerMatchesSpiffeIds() throws Exception {
    ConfigChecks.Result r = ConfigChecks.run(load("""
        groups:
          - name: mesh
            match: { identity: "*" }
          - name: typed
            match: { identity: "spiffe://*" }
        secret_access:
          - secrets: "payments-*"
            identities: ["*", "spiffe://example.org/ns/payments/*"]
        """), ReferenceCheck.WARN);
    assertThat(r.warnings()).filteredOn(f -> f.check() == ConfigChecks.Check.IDENTITY_GLOB)
        .extracting(ConfigChecks.Finding::toString).containsExactly(
            "identity glob: group 'mesh' match.identity '*' matches host names (DNS SANs) only, "
                + "not SPIFFE IDs: a glob without '://' is a DNS glob. For any SPIFFE ID write "
                + "'spiffe://*'; for both, a second group or rule",
            "identity glob: secret_access for 'payments-*' identity '*' matches host names (DNS "
                + "SANs) only, not SPIFFE IDs: a glob without '://' is a DNS glob. For any SPIFFE "
                + "ID write 'spiffe://*'; for both, a second group or rule");
  }

  @Test
  void underMtlsKeyMaterialInlinedOutsideASecretRejectsTheConfig() throws Exception {
    ConfigChecks.Result r = ConfigChecks.run(load(INLINE_KEYS), ReferenceCheck.OFF, true);
    assertThat(r.rejected()).isTrue();
    assertThat(r.rejectionMessages()).hasSize(2).allSatisfy(m -> assertThat(m)
        .contains("under --tls-client-ca key material goes only in Secrets", "SDS"));
    assertThat(r.rejectionMessages()).anySatisfy(m -> assertThat(m).contains("Cluster 'backend'"));
    // A Secret holding its own key is what SDS is for: no finding, mTLS or not.
    ConfigChecks.Result secretOnly = ConfigChecks.run(load("""
        resources:
          - "@type": type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret
            name: server-cert
            tls_certificate: { private_key: { inline_string: "SERVER PRIVATE KEY" } }
        """), ReferenceCheck.OFF, true);
    assertThat(secretOnly.rejected()).isFalse();
    assertThat(secretOnly.warnings()).isEmpty();
  }
}
