package dev.meridian.internal.server;

import static dev.meridian.xds.ResourceType.CLUSTER;
import static dev.meridian.xds.ResourceType.SECRET;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.meridian.testing.RawXdsClient;
import dev.meridian.testing.TestCerts;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.Secret;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.ChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 20 over real TLS handshakes on loopback: the xDS and REST ports serve mTLS with
 * certificates the test makes; a stream's identity is its certificate's SPIFFE URI SAN; the rules
 * (claims need proof, Secrets only to their owners) hold end to end; files rotate under load.
 */
class TrustTest {
  static final String PAYMENTS = "spiffe://example.org/ns/payments/sa/api";
  static final String ORDERS = "spiffe://example.org/ns/orders/sa/api";
  static final String CONFIG = """
      resources:
        - { "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster, name: shared-cluster }
        - "@type": type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret
          name: orders-cert
          tls_certificate: { private_key: { inline_string: "ORDERS PRIVATE KEY" } }
        - "@type": type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret
          name: shared-ca
          validation_context: { trusted_ca: { inline_string: "CA" } }
      groups:
        - name: payments
          match: { node_id: "payments-*", identity: "spiffe://example.org/ns/payments/*" }
          resources:
            - "@type": type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret
              name: payments-cert
              tls_certificate: { private_key: { inline_string: "PAYMENTS PRIVATE KEY" } }
      secret_access:
        - secrets: "orders-*"
          identities: ["spiffe://example.org/ns/orders/*"]
      """;

  @TempDir Path dir;
  TestCerts.Ca ca;
  Path caFile;
  TestCerts.Written serverFiles;
  MeridianServer server;
  final List<ManagedChannel> channels = new ArrayList<>();

  @BeforeEach
  void start() throws Exception {
    ca = TestCerts.ca("meridian-test-ca");
    caFile = ca.writeCert(dir.resolve("ca.crt"));
    serverFiles = ca.leaf("meridian").loopback().issue().write(dir, "server");
    Path config = dir.resolve("config.yaml");
    Files.writeString(config, CONFIG);
    server = new MeridianServer(new MeridianServer.Options(config, "127.0.0.1", 0, 0, 100)
        .withTls(new MeridianServer.Options.Tls(serverFiles.cert(), serverFiles.key(), caFile))
        .withRestPort(0).withCsdsIdentity("spiffe://example.org/ns/ops/*")).start();
  }

  @AfterEach
  void stop() throws Exception {
    for (ManagedChannel c : channels) {
      c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    server.close();
  }

  /** A client whose certificate the test CA issued with {@code identity} as URI SAN. */
  TestCerts.Written client(String name, String identity) {
    TestCerts.LeafBuilder b = ca.leaf(name);
    if (identity != null) {
      b.uri(identity);
    }
    return b.issue().write(dir, name);
  }

  ManagedChannel channel(TestCerts.Written clientFiles, Path trusted) throws Exception {
    TlsChannelCredentials.Builder creds = TlsChannelCredentials.newBuilder()
        .trustManager(trusted.toFile());
    if (clientFiles != null) {
      creds.keyManager(clientFiles.cert().toFile(), clientFiles.key().toFile());
    }
    return channel(creds.build());
  }

  ManagedChannel channel(ChannelCredentials creds) {
    ManagedChannel c = NettyChannelBuilder.forAddress("localhost", server.xdsPort(), creds).build();
    channels.add(c);
    return c;
  }

  static List<String> secretNames(DiscoveryResponse r) throws Exception {
    List<String> names = new ArrayList<>();
    for (var any : r.getResourcesList()) {
      names.add(any.unpack(Secret.class).getName());
    }
    return names;
  }

  @Test
  void mtlsStreamCarriesTheIdentityOfItsCertificateIntoClientsAndCsds() throws Exception {
    RawXdsClient.Sotw envoy = RawXdsClient.sotwAds(channel(client("orders", ORDERS), caFile), "web-1");
    assertThat(envoy.subscribe(CLUSTER).getResourcesCount()).isEqualTo(1);
    HttpResponse<String> clients = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + server.httpPort() + "/clients")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(clients.body()).contains("\"identity\": \"" + ORDERS + "\"");
    var csds = io.envoyproxy.envoy.service.status.v3.ClientStatusDiscoveryServiceGrpc
        .newBlockingStub(channel(client("ops", "spiffe://example.org/ns/ops/sa/cli"), caFile))
        .fetchClientStatus(io.envoyproxy.envoy.service.status.v3.ClientStatusRequest.getDefaultInstance());
    assertThat(csds.getConfig(0).getNode().getMetadata().getFieldsOrThrow(CsdsService.IDENTITY_KEY)
        .getStringValue()).isEqualTo(ORDERS);
    assertThat(csds.getConfig(0).getNode().getMetadata()
        .getFieldsOrThrow(CsdsService.IDENTITY_TYPE_KEY).getStringValue()).isEqualTo("uri");
    assertThat(clients.body()).contains("\"identity_type\": \"uri\"");
    // CSDS shows every client's config: a workload identity may not read it (--csds-identity).
    assertThatThrownBy(() -> io.envoyproxy.envoy.service.status.v3.ClientStatusDiscoveryServiceGrpc
        .newBlockingStub(channel(client("nosy", ORDERS), caFile))
        .fetchClientStatus(io.envoyproxy.envoy.service.status.v3.ClientStatusRequest.getDefaultInstance()))
        .hasMessageContaining("PERMISSION_DENIED").hasMessageContaining("--csds-identity");
    envoy.close();
  }

  @Test
  void clientWithoutACertificateOpensNoStream() throws Exception {
    RawXdsClient.Sotw anonymous = RawXdsClient.sotwAds(channel(null, caFile), "web-1");
    anonymous.send(CLUSTER, "", "");
    assertThat(anonymous.awaitClose().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
  }

  @Test
  void certificateFromAnotherCaIsRefused() throws Exception {
    TestCerts.Written stranger = TestCerts.ca("other-ca").leaf("x").uri(ORDERS).issue()
        .write(dir, "stranger");
    RawXdsClient.Sotw s = RawXdsClient.sotwAds(channel(stranger, caFile), "web-1");
    s.send(CLUSTER, "", "");
    assertThat(s.awaitClose().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
  }

  @Test
  void expiredClientCertificateIsRefused() throws Exception {
    TestCerts.Written old = ca.leaf("old").uri(ORDERS).expired().issue().write(dir, "old");
    RawXdsClient.Sotw s = RawXdsClient.sotwAds(channel(old, caFile), "web-1");
    s.send(CLUSTER, "", "");
    assertThat(s.awaitClose().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
  }

  @Test
  void certificateWithoutSansConnectsWithoutIdentityAndGetsNoSecrets() throws Exception {
    RawXdsClient.Sotw s = RawXdsClient.sotwAds(channel(client("bare", null), caFile), "web-1");
    assertThat(s.subscribe(CLUSTER).getResourcesCount()).isEqualTo(1);
    s.send(SECRET, "", "", "shared-ca");
    // Not sent; for this stream it does not exist (TP3 resource_errors).
    DiscoveryResponse refused = s.take(SECRET);
    assertThat(refused.getResourcesCount()).isZero();
    assertThat(refused.getResourceErrorsList()).singleElement().satisfies(e -> {
      assertThat(e.getResourceName().getName()).isEqualTo("shared-ca");
      assertThat(e.getErrorDetail().getCode()).isEqualTo(Status.Code.NOT_FOUND.value());
    });
    RawXdsClient.Sotw claimer = RawXdsClient.sotwAds(channel(client("bare2", null), caFile),
        "payments-1");
    claimer.send(CLUSTER, "", "");
    assertThat(claimer.awaitClose().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
    s.close();
  }

  @Test
  void identityClaimingAnotherGroupsNodeIdIsDeniedNamingBothAndCounted() throws Exception {
    RawXdsClient.Sotw claimer = RawXdsClient.sotwAds(channel(client("orders", ORDERS), caFile),
        "payments-7");
    claimer.send(SECRET, "", "");
    Status denied = claimer.awaitClose();
    assertThat(denied.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
    assertThat(denied.getDescription()).contains("payments-7", ORDERS);
    assertThat(metrics()).contains("meridian_streams_denied_total 1");
    RawXdsClient.Sotw owner = RawXdsClient.sotwAds(channel(client("payments", PAYMENTS), caFile),
        "payments-1");
    assertThat(secretNames(owner.subscribe(SECRET))).containsExactly("payments-cert");
    owner.close();
  }

  @Test
  void secretRequestedByNameByTheWrongIdentityIsWithheldOnSotwAndDelta() throws Exception {
    for (boolean ads : new boolean[] {true, false}) {
      RawXdsClient.Sotw sotw = ads
          ? RawXdsClient.sotwAds(channel(client("p" + ads, PAYMENTS), caFile), "web-p")
          : RawXdsClient.sotwPerType(channel(client("p" + ads, PAYMENTS), caFile), SECRET, "web-p");
      assertThat(secretNames(sotw.subscribe(SECRET, "orders-cert", "shared-ca")))
          .containsExactly("shared-ca");
      sotw.close();
      RawXdsClient.Delta delta = ads
          ? RawXdsClient.deltaAds(channel(client("d" + ads, PAYMENTS), caFile), "web-d")
          : RawXdsClient.deltaPerType(channel(client("d" + ads, PAYMENTS), caFile), SECRET, "web-d");
      DeltaDiscoveryResponse r = delta.subscribe(SECRET, "orders-cert", "shared-ca");
      assertThat(r.getResourcesList()).extracting(x -> x.getName()).containsExactly("shared-ca");
      assertThat(r.getRemovedResourcesList()).containsExactly("orders-cert");
      delta.close();
    }
    assertThat(metrics()).contains("meridian_secrets_withheld_total 4");
    RawXdsClient.Sotw owner = RawXdsClient.sotwAds(channel(client("o", ORDERS), caFile), "web-o");
    assertThat(secretNames(owner.subscribe(SECRET, "orders-cert"))).containsExactly("orders-cert");
    owner.close();
  }

  @Test
  void aDnsSanSpelledLikeASpiffeIdIsNoIdentity() throws Exception {
    TestCerts.Written spoof = ca.leaf("spoof").dns(PAYMENTS).issue().write(dir, "spoof");
    // Not payments: its claim to a payments node id is refused, and no Secret comes.
    RawXdsClient.Sotw claimer = RawXdsClient.sotwAds(channel(spoof, caFile), "payments-1");
    claimer.send(SECRET, "", "");
    Status denied = claimer.awaitClose();
    assertThat(denied.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
    assertThat(denied.getDescription()).contains("identity is none");
    RawXdsClient.Sotw web = RawXdsClient.sotwAds(channel(spoof, caFile), "web-1");
    assertThat(web.subscribe(SECRET, "shared-ca").getResourcesCount()).isZero();
    web.close();
    // Nor is a DNS SAN spelled like the CSDS identity an operator's.
    TestCerts.Written ops = ca.leaf("ops-spoof").dns("spiffe://example.org/ns/ops/sa/cli").issue()
        .write(dir, "ops-spoof");
    assertThatThrownBy(() -> io.envoyproxy.envoy.service.status.v3.ClientStatusDiscoveryServiceGrpc
        .newBlockingStub(channel(ops, caFile))
        .fetchClientStatus(io.envoyproxy.envoy.service.status.v3.ClientStatusRequest.getDefaultInstance()))
        .hasMessageContaining("PERMISSION_DENIED").hasMessageContaining("identity none");
    // A host name is a DNS identity, shown as such, and a URI glob does not take it.
    RawXdsClient.Sotw host = RawXdsClient.sotwAds(channel(ca.leaf("host").dns("api.example.org")
        .issue().write(dir, "host"), caFile), "web-2");
    assertThat(host.subscribe(CLUSTER).getResourcesCount()).isEqualTo(1);
    assertThat(clients()).contains("\"identity\": \"api.example.org\"",
        "\"identity_type\": \"dns\"");
    host.close();
  }

  @Test
  void aCertificateWithTwoUriSansOpensNoStreamOnXdsRestOrCsds() throws Exception {
    TestCerts.Written two = ca.leaf("two").uri(ORDERS).uri(PAYMENTS).issue().write(dir, "two");
    RawXdsClient.Sotw s = RawXdsClient.sotwAds(channel(two, caFile), "web-1");
    s.send(CLUSTER, "", "");
    Status refused = s.awaitClose();
    assertThat(refused.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(refused.getDescription()).contains("2 URI SANs", ORDERS, PAYMENTS, "exactly one");
    assertThatThrownBy(() -> io.envoyproxy.envoy.service.status.v3.ClientStatusDiscoveryServiceGrpc
        .newBlockingStub(channel(ca.leaf("two-ops").uri("spiffe://example.org/ns/ops/sa/cli")
            .uri(ORDERS).issue().write(dir, "two-ops"), caFile))
        .fetchClientStatus(io.envoyproxy.envoy.service.status.v3.ClientStatusRequest.getDefaultInstance()))
        .hasMessageContaining("UNAUTHENTICATED").hasMessageContaining("2 URI SANs");
    HttpResponse<String> rest = https(two).send(restPost("secrets",
        "{\"node\": {\"id\": \"r-1\"}, \"resource_names\": [\"orders-cert\"]}"),
        HttpResponse.BodyHandlers.ofString());
    assertThat(rest.statusCode()).isEqualTo(401);
    assertThat(rest.body()).contains("2 URI SANs").doesNotContain("ORDERS PRIVATE KEY");
  }

  String clients() throws Exception {
    return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
        + server.httpPort() + "/clients")).build(), HttpResponse.BodyHandlers.ofString()).body();
  }

  @Test
  void aWithheldSecretLooksExactlyLikeAMissingOneOnSotwDeltaAndRest() throws Exception {
    // orders-cert exists and is withheld from payments; orders-gone never existed.
    RawXdsClient.Sotw sotw = RawXdsClient.sotwAds(channel(client("ws", PAYMENTS), caFile), "web-s");
    DiscoveryResponse r = sotw.subscribe(SECRET, "orders-cert", "orders-gone");
    assertThat(r.getResourcesCount()).isZero();
    assertThat(r.getResourceErrorsList()).hasSize(2).allSatisfy(e -> {
      assertThat(e.getErrorDetail().getCode()).isEqualTo(Status.Code.NOT_FOUND.value());
      assertThat(e.getErrorDetail().getMessage().replace(e.getResourceName().getName(), "NAME"))
          .isEqualTo("SDS resource 'NAME' does not exist");
    });
    sotw.close();
    RawXdsClient.Delta delta = RawXdsClient.deltaAds(channel(client("wd", PAYMENTS), caFile), "web-d");
    DeltaDiscoveryResponse d = delta.subscribe(SECRET, "orders-cert", "orders-gone");
    assertThat(d.getResourcesList()).isEmpty();
    assertThat(d.getRemovedResourcesList()).containsExactlyInAnyOrder("orders-cert", "orders-gone");
    assertThat(d.getResourceErrorsList()).hasSize(2).allSatisfy(e -> {
      assertThat(e.getErrorDetail().getCode()).isEqualTo(Status.Code.NOT_FOUND.value());
      assertThat(e.getErrorDetail().getMessage().replace(e.getResourceName().getName(), "NAME"))
          .isEqualTo("SDS resource 'NAME' does not exist");
    });
    delta.close();
    HttpClient rest = https(client("wr", PAYMENTS));
    HttpRequest ask = restPost("secrets", "{\"node\": {\"id\": \"r-w\"},"
        + " \"resource_names\": [\"orders-cert\"]}");
    String withheld = rest.send(ask, HttpResponse.BodyHandlers.ofString()).body();
    assertThat(withheld).contains("\"code\": 5").doesNotContain("ORDERS PRIVATE KEY");
    // The server says which it was.
    assertThat(metrics()).contains("meridian_secrets_withheld_total 3");
    // Once orders-cert is deleted, the answer is the very same, version_info included.
    Files.writeString(dir.resolve("config.yaml"), CONFIG.replace("name: orders-cert", "name: other"));
    awaitMetric("meridian_config_reloads_total{result=\"ok\"} 1");
    assertThat(rest.send(ask, HttpResponse.BodyHandlers.ofString()).body()).isEqualTo(withheld);
  }

  static final String CLUSTER_WITH_INLINE_KEY =
      dev.meridian.testing.ConfigFiles.clusterWithInlineKey("leaky", "LEAKY PRIVATE KEY");

  @Test
  void underMtlsAClusterInliningAPrivateKeyIsRefusedAtReloadAndAtStart() throws Exception {
    RawXdsClient.Sotw envoy = RawXdsClient.sotwAds(channel(client("o", ORDERS), caFile), "web-1");
    envoy.ack(envoy.subscribe(CLUSTER));
    String leaky = CONFIG.replace("\ngroups:\n", "\n" + CLUSTER_WITH_INLINE_KEY + "groups:\n");
    Files.writeString(dir.resolve("config.yaml"), leaky);
    awaitMetric("meridian_config_reloads_total{result=\"failed\"} 1");
    // The last good config stays: the key went nowhere.
    RawXdsClient.Sotw later = RawXdsClient.sotwAds(channel(client("l", ORDERS), caFile), "web-2");
    DiscoveryResponse clusters = later.subscribe(CLUSTER);
    assertThat(clusters.getResourcesCount()).isEqualTo(1);
    assertThat(clusters.toString()).doesNotContain("LEAKY PRIVATE KEY");
    later.close();
    envoy.close();
    // A start with it does not listen at all, and says where the key is and what to do.
    Path config = dir.resolve("leaky.yaml");
    Files.writeString(config, leaky);
    assertThatThrownBy(() -> new MeridianServer(new MeridianServer.Options(config, "127.0.0.1", 0,
        0, 100).withTls(new MeridianServer.Options.Tls(serverFiles.cert(), serverFiles.key(), caFile)))
        .start()).hasMessageContaining("Cluster 'leaky' inlines key material at transport_socket"
            + ".typed_config.common_tls_context.tls_certificates[0].private_key.inline_string")
        .hasMessageContaining("--tls-client-ca").hasMessageContaining("SDS");
  }

  @Test
  void rotatedServerCertificateServesNewHandshakesWhileConnectedStreamsGoOn() throws Exception {
    RawXdsClient.Sotw before = RawXdsClient.sotwAds(channel(client("a", ORDERS), caFile), "web-1");
    before.ack(before.subscribe(CLUSTER));
    // A new CA and server certificate, written over the files (by rename) while connected.
    TestCerts.Ca next = TestCerts.ca("next-ca");
    next.leaf("meridian-2").loopback().issue().write(dir, "server");
    Path nextCa = next.writeCert(dir.resolve("next-ca.crt"));
    awaitHandshake(nextCa, true);
    // The old connection still works: a config change reaches it.
    Files.writeString(dir.resolve("config.yaml"), CONFIG.replace("shared-cluster }",
        "shared-cluster, connect_timeout: 3s }"));
    assertThat(before.take(CLUSTER).getResourcesCount()).isEqualTo(1);
    before.close();
  }

  @Test
  void rotatedClientCaAdmitsItsCertificatesAndNoLongerTheOldOnes() throws Exception {
    TestCerts.Ca next = TestCerts.ca("next-client-ca");
    TestCerts.Written newcomer = next.leaf("newcomer").uri(ORDERS).issue().write(dir, "newcomer");
    replace(caFile, Files.readAllBytes(next.writeCert(dir.resolve("next.crt"))));
    awaitMetric("meridian_tls_reloads_total{result=\"ok\"} 1");
    RawXdsClient.Sotw admitted = RawXdsClient.sotwAds(channel(newcomer, serverTrust()), "web-1");
    assertThat(admitted.subscribe(CLUSTER).getResourcesCount()).isEqualTo(1);
    admitted.close();
    RawXdsClient.Sotw refused = RawXdsClient.sotwAds(channel(client("old", ORDERS), serverTrust()),
        "web-2");
    refused.send(CLUSTER, "", "");
    assertThat(refused.awaitClose().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
  }

  /** What a client trusts to verify the server: the original CA, which issued its certificate. */
  Path serverTrust() {
    return ca.writeCert(dir.resolve("server-trust.crt"));
  }

  @Test
  void badNewCertificateFileIsLoggedAndThePreviousOneStaysInUse() throws Exception {
    byte[] good = Files.readAllBytes(serverFiles.cert());
    replace(serverFiles.cert(), "-----BEGIN CERTIFICATE-----\nnot base64\n".getBytes());
    awaitMetric("meridian_tls_reloads_total{result=\"failed\"} 1");
    assertThat(handshakeWorks()).isTrue();
    // A key that belongs to another certificate is refused as well.
    replace(serverFiles.cert(), good);
    replace(serverFiles.key(), Files.readAllBytes(ca.leaf("other").issue().write(dir, "other").key()));
    awaitMetric("meridian_tls_reloads_total{result=\"failed\"} 2");
    assertThat(handshakeWorks()).isTrue();
    assertThat(metrics()).contains("meridian_tls_reloads_total{result=\"ok\"} 0");
  }

  boolean handshakeWorks() throws Exception {
    RawXdsClient.Sotw s = RawXdsClient.sotwAds(channel(client("c" + System.nanoTime(), ORDERS),
        caFile), "web-1");
    boolean ok = s.subscribe(CLUSTER).getResourcesCount() == 1;
    s.close();
    return ok;
  }

  void replace(Path file, byte[] bytes) throws Exception {
    Path tmp = file.resolveSibling("." + file.getFileName() + ".tmp");
    Files.write(tmp, bytes);
    Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
        java.nio.file.StandardCopyOption.ATOMIC_MOVE);
  }

  void awaitMetric(String line) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!metrics().contains(line)) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("no '" + line + "' in /metrics within 10 s:\n" + metrics());
      }
      Thread.onSpinWait();
    }
  }

  @Test
  void restOverMtlsAppliesTheSameIdentityRules() throws Exception {
    HttpClient owner = https(client("rest-o", ORDERS));
    HttpResponse<String> ok = owner.send(restPost("secrets", "{\"node\": {\"id\": \"r-1\"},"
        + " \"resource_names\": [\"orders-cert\"]}"), HttpResponse.BodyHandlers.ofString());
    assertThat(ok.statusCode()).isEqualTo(200);
    assertThat(ok.body()).contains("orders-cert");
    HttpResponse<String> wrong = https(client("rest-p", PAYMENTS)).send(restPost("secrets",
        "{\"node\": {\"id\": \"r-2\"}, \"resource_names\": [\"orders-cert\"]}"),
        HttpResponse.BodyHandlers.ofString());
    // Nothing it may have: no Secret, and for it the name does not exist (TP3 resource_errors).
    assertThat(wrong.statusCode()).isEqualTo(200);
    assertThat(wrong.body()).doesNotContain("ORDERS PRIVATE KEY")
        .contains("\"resource_errors\"", "orders-cert", "\"code\": 5");
    String version = com.google.gson.JsonParser.parseString(wrong.body()).getAsJsonObject()
        .get("version_info").getAsString();
    HttpResponse<String> again = https(client("rest-p2", PAYMENTS)).send(restPost("secrets",
        "{\"node\": {\"id\": \"r-2\"}, \"version_info\": \"" + version + "\","
            + " \"resource_names\": [\"orders-cert\"]}"), HttpResponse.BodyHandlers.ofString());
    assertThat(again.statusCode()).isEqualTo(304); // a poll at that version: nothing new
    HttpResponse<String> claim = https(client("rest-c", ORDERS)).send(restPost("secrets",
        "{\"node\": {\"id\": \"payments-1\"}}"), HttpResponse.BodyHandlers.ofString());
    assertThat(claim.statusCode()).isEqualTo(403);
    assertThat(claim.body()).contains("payments-1", ORDERS);
    assertThatThrownBy(() -> https(null).send(restPost("clusters", "{\"node\": {\"id\": \"x\"}}"),
        HttpResponse.BodyHandlers.ofString())).isInstanceOfAny(SSLHandshakeException.class,
            java.io.IOException.class);
  }

  /** Waits (bounded) until a handshake trusting {@code trusted} succeeds (or, if not, fails). */
  void awaitHandshake(Path trusted, boolean succeeds) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (true) {
      try {
        RawXdsClient.Sotw s = RawXdsClient.sotwAds(channel(client("h" + System.nanoTime(), ORDERS),
            trusted), "web-h");
        s.subscribe(CLUSTER);
        s.close();
        if (succeeds) {
          return;
        }
      } catch (AssertionError | Exception e) {
        if (!succeeds) {
          return;
        }
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("no handshake trusting " + trusted + " within 10 s");
      }
    }
  }

  HttpRequest restPost(String type, String body) {
    return HttpRequest.newBuilder(URI.create("https://localhost:" + server.restPort()
        + "/v3/discovery:" + type)).POST(HttpRequest.BodyPublishers.ofString(body))
        .timeout(Duration.ofSeconds(10)).build();
  }

  HttpClient https(TestCerts.Written clientFiles) throws Exception {
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    trust.setCertificateEntry("ca", ca.cert());
    TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    KeyManagerFactory kmf = null;
    if (clientFiles != null) {
      KeyStore keys = KeyStore.getInstance("PKCS12");
      keys.load(null, null);
      X509Certificate cert = (X509Certificate) java.security.cert.CertificateFactory
          .getInstance("X.509").generateCertificate(Files.newInputStream(clientFiles.cert()));
      keys.setKeyEntry("me", io.grpc.util.CertificateUtils.getPrivateKey(
          Files.newInputStream(clientFiles.key())), new char[0], new X509Certificate[] {cert});
      kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(keys, new char[0]);
    }
    SSLContext ssl = SSLContext.getInstance("TLS");
    ssl.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
    return HttpClient.newBuilder().sslContext(ssl).connectTimeout(Duration.ofSeconds(5)).build();
  }

  String metrics() throws Exception {
    return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
        + server.httpPort() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
  }
}
