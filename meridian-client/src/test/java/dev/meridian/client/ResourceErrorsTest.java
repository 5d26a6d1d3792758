package dev.meridian.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.internal.server.MeridianServer;
import dev.meridian.testing.ConfigFiles;
import dev.meridian.testing.TestCerts;
import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.config.core.v3.Node;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Per-resource errors (xDS TP3 {@code resource_errors}) read as gRFC A88 "Support for Errors
 * Provided by the xDS server" says, against a real Meridian server in every client variant. The
 * does-not-exist timeout is ten minutes, so whatever ends a wait here within the 20 s bound of
 * {@link Await} is the server's error, not the timer.
 */
class ResourceErrorsTest {
  private static final Duration NEVER = Duration.ofMinutes(10);
  static final String ORDERS = "spiffe://example.org/ns/orders/sa/api";
  static final String CONFIG = """
      resources:
        - { "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster, name: c1, type: EDS,
            connect_timeout: 1s, eds_cluster_config: { eds_config: { ads: {}, resource_api_version: V3 } } }
        - "@type": type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment
          cluster_name: c1
          endpoints: [ { lb_endpoints: [ { endpoint: { address: { socket_address: { address: 127.0.0.1, port_value: 5001 } } } } ] } ]
        - "@type": type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret
          name: orders-cert
          validation_context: { trusted_ca: { inline_string: "CA" } }
      secret_access:
        - secrets: "orders-*"
          identities: ["%s"]
      """;

  @TempDir
  Path dir;
  private Path config;
  private MeridianServer server;
  private XdsClient client;

  @AfterEach
  void stop() {
    if (client != null) {
      client.close();
    }
    if (server != null) {
      server.close();
    }
  }

  private void serve(String yaml, MeridianServer.Options.Tls tls) throws Exception {
    config = dir.resolve("config.yaml");
    Files.writeString(config, yaml);
    server = new MeridianServer(new MeridianServer.Options(config, "127.0.0.1", 0, 0, 100)
        .withTls(tls)).start();
  }

  private XdsClient connect(ClientVariant v, TlsConfig tls) {
    client = XdsClient.create(Bootstrap.forServer("127.0.0.1:" + server.xdsPort(),
        Node.newBuilder().setId("errors").build(), tls),
        XdsClient.Options.defaults().withProtocol(v.protocol).withMode(v.mode)
            .withDoesNotExistTimeout(NEVER));
    return client;
  }

  // gRFC A88: "When we receive an error for a given resource, we will cancel the resource timer,
  // if any, and report the error to the watchers". NOT_FOUND is the resource not existing: on
  // SotW an endpoint (not full-state) used to wait for the 15 s timer; Delta also names it in
  // removed_resources.
  @ParameterizedTest
  @EnumSource(ClientVariant.class)
  void notFoundErrorEndsTheWaitAtOnce(ClientVariant v) throws Exception {
    serve(CONFIG.formatted(ORDERS), null);
    connect(v, null);
    RecordingWatcher endpoints = new RecordingWatcher();
    RecordingWatcher clusters = new RecordingWatcher();
    client.watch(ResourceType.ENDPOINT, java.util.List.of("c1", "missing"), endpoints);
    client.watch(ResourceType.CLUSTER, "missing", clusters);

    Await.until("missing endpoints reported absent", () -> endpoints.events.contains("dne:missing"));
    Await.until("missing cluster reported absent", () -> clusters.events.contains("dne:missing"));
    assertThat(endpoints.latest).containsOnlyKeys("c1");
    assertThat(endpoints.errors).isEmpty(); // NOT_FOUND is an absence, not an error
    assertThat(endpoints.events).noneMatch(e -> e.endsWith(":nack"));
  }

  // A plaintext stream has no identity and receives no Secret (docs/security.md). A Secret
  // withheld from a stream does not exist for it: Meridian says NOT_FOUND, as for a name that is
  // nowhere, so the client reports an absence and learns nothing about which names exist.
  @ParameterizedTest
  @EnumSource(ClientVariant.class)
  void aWithheldSecretIsAnAbsenceLikeAMissingOne(ClientVariant v) throws Exception {
    serve(CONFIG.formatted(ORDERS), null);
    connect(v, null);
    RecordingWatcher secrets = new RecordingWatcher();
    client.watch(ResourceType.SECRET, "orders-cert", secrets);
    RecordingWatcher missing = new RecordingWatcher();
    client.watch(ResourceType.SECRET, "orders-gone", missing);

    Await.until("both reported absent", () -> secrets.events.contains("dne:orders-cert")
        && missing.events.contains("dne:orders-gone"));
    assertThat(secrets.errors).isEmpty();
    assertThat(missing.errors).isEmpty();
  }

  // A reload takes the Secret away from this stream's identity: for the stream it is deleted.
  @ParameterizedTest
  @EnumSource(ClientVariant.class)
  void aSecretTakenAwayByAReloadIsGoneForTheClientAsIfDeleted(ClientVariant v)
      throws Exception {
    TestCerts.Ca ca = TestCerts.ca("meridian-test-ca");
    Path caFile = ca.writeCert(dir.resolve("ca.crt"));
    TestCerts.Written serverFiles = ca.leaf("meridian").loopback().issue().write(dir, "server");
    TestCerts.Written clientFiles = ca.leaf("orders").uri(ORDERS).issue().write(dir, "orders");
    serve(CONFIG.formatted(ORDERS),
        new MeridianServer.Options.Tls(serverFiles.cert(), serverFiles.key(), caFile));
    connect(v, new TlsConfig(caFile, clientFiles.cert(), clientFiles.key()));
    RecordingWatcher secrets = new RecordingWatcher();
    client.watch(ResourceType.SECRET, "orders-cert", secrets);
    Await.until("the secret", () -> secrets.latest.containsKey("orders-cert"));
    secrets.take();

    ConfigFiles.replaceByRename(config,
        CONFIG.formatted("spiffe://example.org/ns/payments/*"));
    Await.until("its deletion", () -> secrets.events.contains("dne:orders-cert"));
    assertThat(secrets.errors).isEmpty();
  }
}
