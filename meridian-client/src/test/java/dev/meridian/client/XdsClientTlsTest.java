package dev.meridian.client;

import static dev.meridian.client.TestResources.edsCluster;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import dev.meridian.xds.ResourceType;
import dev.meridian.testing.TestCerts;
import dev.meridian.testing.TlsServers;
import io.envoyproxy.controlplane.cache.v3.SimpleCache;
import io.envoyproxy.controlplane.cache.v3.Snapshot;
import io.envoyproxy.controlplane.server.V3DiscoveryServer;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client over real TLS (gRFC A65 {@code tls} channel creds from a bootstrap) against a
 * java-control-plane server on loopback that requires a client certificate, and the rotation of
 * the files while the client runs.
 */
class XdsClientTlsTest {
  static final String CLIENT_A = "spiffe://meridian.test/ns/default/sa/client-a";
  static final String CLIENT_B = "spiffe://meridian.test/ns/default/sa/client-b";

  @TempDir
  Path dir;
  private final TestCerts.Ca ca = TestCerts.ca("meridian-test-ca");
  private final TlsServers.Peers peers = new TlsServers.Peers();
  private final SimpleCache<String> cache = new SimpleCache<>(node -> "group");
  private final List<LogRecord> logged = new CopyOnWriteArrayList<>();
  private final Handler logHandler = new Handler() {
    @Override
    public void publish(LogRecord r) {
      logged.add(r);
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  };
  private Path caFile;
  private TestCerts.Written serverFiles;
  private TestCerts.Written clientFiles;
  private Server server;
  private XdsClient client;

  @BeforeEach
  void setUp() {
    caFile = ca.writeCert(dir.resolve("ca.crt"));
    serverFiles = ca.leaf("xds-server").loopback().issue().write(dir, "server");
    clientFiles = ca.leaf("client-a").uri(CLIENT_A).issue().write(dir, "client");
    cache.setSnapshot("group", Snapshot.create(List.of(edsCluster("a")), List.of(), List.of(),
        List.of(), List.of(), "1"));
    Logger.getLogger("dev.meridian.client").addHandler(logHandler);
  }

  @AfterEach
  void tearDown() throws Exception {
    Logger.getLogger("dev.meridian.client").removeHandler(logHandler);
    if (client != null) {
      client.close();
    }
    if (server != null) {
      server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  /** An xDS server on loopback with {@code cert}; with {@code clientCa}, clients need a certificate. */
  private Server start(int port, TestCerts.Written cert, Path clientCa) throws IOException {
    V3DiscoveryServer xds = new V3DiscoveryServer(cache);
    return NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port),
            TlsServers.credentials(cert, clientCa))
        .addService(xds.getAggregatedDiscoveryServiceImpl())
        .intercept(peers)
        .build().start();
  }

  /**
   * Ends every connection and serves again on the same port with {@code cert}: the client's next
   * stream needs a new connection (and handshake). Returns the client identity it came with.
   */
  private String nextConnection(TestCerts.Written cert) throws Exception {
    int before = peers.identities().size();
    int port = server.getPort();
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    server = start(port, cert, caFile);
    Await.until("a new stream", () -> peers.identities().size() > before);
    return peers.last();
  }

  /** A gRFC A27 bootstrap for the server, with gRFC A65 tls channel creds. */
  private Bootstrap bootstrap(Path trust, TestCerts.Written identity, String refresh)
      throws BootstrapException {
    JsonObject config = new JsonObject();
    if (trust != null) {
      config.addProperty("ca_certificate_file", trust.toString());
    }
    if (identity != null) {
      config.addProperty("certificate_file", identity.cert().toString());
      config.addProperty("private_key_file", identity.key().toString());
    }
    if (refresh != null) {
      config.addProperty("refresh_interval", refresh);
    }
    return Bootstrap.fromJson("""
        {"xds_servers": [{"server_uri": "127.0.0.1:%d",
                          "channel_creds": [{"type": "tls", "config": %s}],
                          "server_features": ["xds_v3"]}],
         "node": {"id": "tls-test"}}
        """.formatted(server.getPort(), config));
  }

  private static List<XdsError> errors(RecordingWatcher w) {
    synchronized (w) {
      return List.copyOf(w.errors);
    }
  }

  /** Watches cluster a on a client made from {@code bootstrap}. */
  private RecordingWatcher watchCluster(Bootstrap bootstrap) {
    client = XdsClient.create(bootstrap, XdsClient.Options.defaults());
    RecordingWatcher w = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, "a", w);
    return w;
  }

  /** The first error of a client made from {@code bootstrap}; it got no resource. */
  private XdsError firstError(Bootstrap bootstrap) {
    RecordingWatcher w = watchCluster(bootstrap);
    Await.until("the stream fails", () -> !errors(w).isEmpty());
    assertThat(w.latest).isEmpty();
    return errors(w).get(0);
  }

  /**
   * A client with the mTLS files re-read every 50 ms, once cluster a has arrived; returns its
   * transport, whose TLS material the test watches.
   */
  private GrpcXdsTransport connectRereadingTheFiles() throws Exception {
    GrpcXdsTransport[] transport = new GrpcXdsTransport[1];
    client = new XdsClient(bootstrap(caFile, clientFiles, "0.05s"), XdsClient.Options.defaults(),
        s -> transport[0] = new GrpcXdsTransport(s));
    RecordingWatcher w = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, "a", w);
    Await.until("cluster a", () -> w.latest.containsKey("a"));
    return transport[0];
  }

  private String handshakeFailure(String why) {
    return "TLS handshake with 127.0.0.1:" + server.getPort() + " failed: " + why;
  }

  @Test
  void mutualTlsDeliversResourcesAndTheServerSeesTheClientCertificate() throws Exception {
    server = start(0, serverFiles, caFile);
    RecordingWatcher w = watchCluster(bootstrap(caFile, clientFiles, null));
    Await.until("cluster a over mTLS", () -> w.latest.containsKey("a"));
    assertThat(peers.identities()).isNotEmpty().containsOnly(CLIENT_A);
    assertThat(errors(w)).isEmpty();
  }

  @Test
  void theServerRejectsAClientWithoutACertificate() throws Exception {
    server = start(0, serverFiles, caFile);
    XdsError e = firstError(bootstrap(caFile, null, null));
    assertThat(e.kind()).isEqualTo(XdsError.Kind.UNAVAILABLE);
    assertThat(e.message()).isEqualTo(handshakeFailure(
        "the server requires a client certificate and this client has none"));
    assertThat(peers.identities()).isEmpty();
  }

  @Test
  void theServerRejectsAClientCertificateFromACaItDoesNotTrust() throws Exception {
    server = start(0, serverFiles, caFile);
    TestCerts.Written stranger = TestCerts.ca("stranger-ca").leaf("stranger")
        .uri("spiffe://elsewhere.test/stranger").issue().write(dir, "stranger");
    assertThat(firstError(bootstrap(caFile, stranger, null)).message()).isEqualTo(
        handshakeFailure("the server aborted the handshake (alert internal_error; grpc-java "
            + "servers send it when they refuse the client's certificate)"));
    assertThat(peers.identities()).isEmpty();
  }

  @Test
  void aServerCertificateTheCaDoesNotTrustFailsSayingSo() throws Exception {
    server = start(0, serverFiles, caFile);
    Path otherCa = TestCerts.ca("other-ca").writeCert(dir.resolve("other-ca.crt"));
    assertThat(firstError(bootstrap(otherCa, clientFiles, null)).message()).isEqualTo(
        handshakeFailure("the server's certificate is not issued by a CA this client trusts"));
  }

  @Test
  void aServerCertificateForAnotherNameFailsSayingSo() throws Exception {
    TestCerts.Written elsewhere = ca.leaf("elsewhere").dns("xds.example.com").issue()
        .write(dir, "elsewhere");
    server = start(0, elsewhere, caFile);
    assertThat(firstError(bootstrap(caFile, clientFiles, null)).message()).isEqualTo(
        handshakeFailure("the server's certificate does not name 127.0.0.1"));
  }

  @Test
  void aRotatedCertificateIsPresentedOnTheNextConnection() throws Exception {
    server = start(0, serverFiles, caFile);
    GrpcXdsTransport transport = connectRereadingTheFiles();
    assertThat(peers.last()).isEqualTo(CLIENT_A);

    // Certificate and key replaced by rename (TestCerts writes aside, then renames over).
    ca.leaf("client-b").uri(CLIENT_B).issue().write(dir, "client");
    Await.until("the new certificate is loaded", () -> transport.tls().certificate()
        .getSubjectX500Principal().getName().equals("CN=client-b"));
    assertThat(nextConnection(serverFiles)).isEqualTo(CLIENT_B);
  }

  @Test
  void aBadNewCertificateIsLoggedAndTheOldOneStaysInUse() throws Exception {
    server = start(0, serverFiles, caFile);
    GrpcXdsTransport transport = connectRereadingTheFiles();

    // A new certificate without its key: the old key does not match it.
    ca.leaf("client-b").uri(CLIENT_B).issue().writeCert(clientFiles.cert());
    Await.until("the mismatch is noticed", () -> transport.tls().problem() != null);
    assertThat(transport.tls().problem()).isEqualTo(clientFiles.key()
        + ": is not the private key of the certificate in " + clientFiles.cert());
    Await.until("the mismatch is logged", () -> logged.stream().anyMatch(r ->
        r.getLevel() == Level.WARNING && r.getMessage().contains("is not the private key")
            && r.getMessage().contains("keeping the previous certificates and key")));
    assertThat(nextConnection(serverFiles)).isEqualTo(CLIENT_A);
  }

  @Test
  void aRotatedCaIsTrustedOnTheNextConnection() throws Exception {
    Path clientTrust = ca.writeCert(dir.resolve("client-trust.crt"));
    server = start(0, serverFiles, caFile);
    RecordingWatcher w = watchCluster(bootstrap(clientTrust, clientFiles, "0.05s"));
    Await.until("cluster a", () -> w.latest.containsKey("a"));

    // The server moves to a certificate of a new CA; the client's trust file is replaced with it.
    TestCerts.Ca next = TestCerts.ca("next-ca");
    TestCerts.Written nextServer = next.leaf("xds-server-2").loopback().issue().write(dir, "server2");
    next.writeCert(clientTrust);
    assertThat(nextConnection(nextServer)).isEqualTo(CLIENT_A);
  }
}
