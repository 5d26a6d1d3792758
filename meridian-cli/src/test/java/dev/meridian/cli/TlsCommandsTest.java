package dev.meridian.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.meridian.internal.config.ConfigLoader;
import dev.meridian.internal.protocol.HeartbeatPolicy;
import dev.meridian.internal.server.DiscoveryHub;
import dev.meridian.internal.server.XdsServices;
import dev.meridian.testing.TestCerts;
import dev.meridian.testing.TlsServers;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.status.v3.ClientConfig;
import io.envoyproxy.envoy.service.status.v3.ClientStatusDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.status.v3.ClientStatusRequest;
import io.envoyproxy.envoy.service.status.v3.ClientStatusResponse;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code get}, {@code watch}, {@code resolve} and {@code status} with {@code --tls-*} (issue 20) against a server
 * on loopback that requires a client certificate: Meridian's own xDS services over the quickstart
 * config, and a CSDS that reports one client.
 */
class TlsCommandsTest {
  static final String SPIFFE_ID = "spiffe://meridian.test/ns/ops/sa/cli";

  @TempDir
  Path dir;
  private final TlsServers.Peers peers = new TlsServers.Peers();
  private final ExecutorService pool = Executors.newFixedThreadPool(2);
  private TestCerts.Ca ca;
  private Path caFile;
  private TestCerts.Written client;
  private Server server;
  private String addr;

  @BeforeEach
  void start() throws Exception {
    ca = TestCerts.ca("meridian-test-ca");
    caFile = ca.writeCert(dir.resolve("ca.crt"));
    client = ca.leaf("cli").uri(SPIFFE_ID).issue().write(dir, "cli");
    TestCerts.Written serverFiles = ca.leaf("meridian").loopback().issue().write(dir, "server");
    DiscoveryHub hub = new DiscoveryHub();
    hub.update(new ConfigLoader().load(Path.of("..", "examples", "quickstart.yaml")).config());
    NettyServerBuilder b = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0),
        TlsServers.credentials(serverFiles, caFile)).intercept(peers);
    for (ServerServiceDefinition d : XdsServices.all(hub, Clock.systemUTC(), pool,
        HeartbeatPolicy.fractionOfTtl(1.0 / 3))) {
      b.addService(d);
    }
    b.addService(new OneClientCsds());
    server = b.build().start();
    addr = "127.0.0.1:" + server.getPort();
  }

  @AfterEach
  void stop() throws Exception {
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    pool.shutdownNow();
  }

  /** A CSDS that knows one client, {@code envoy-tls}. */
  private static final class OneClientCsds
      extends ClientStatusDiscoveryServiceGrpc.ClientStatusDiscoveryServiceImplBase {
    @Override
    public void fetchClientStatus(ClientStatusRequest request,
        StreamObserver<ClientStatusResponse> responses) {
      responses.onNext(ClientStatusResponse.newBuilder().addConfig(ClientConfig.newBuilder()
          .setNode(Node.newBuilder().setId("envoy-tls").setCluster("edge"))).build());
      responses.onCompleted();
    }
  }

  private List<String> tls(boolean withCertificate) {
    List<String> args = new ArrayList<>(List.of("--tls-ca", caFile.toString()));
    if (withCertificate) {
      args.addAll(List.of("--tls-cert", client.cert().toString(), "--tls-key",
          client.key().toString()));
    }
    return args;
  }

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int get(List<String> args) {
    List<String> all = new ArrayList<>(List.of("--server", addr, "--type", "clusters", "-o",
        "json", "--timeout", "5s"));
    all.addAll(args);
    return new CommandLine(new GetCommand(new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8))).execute(all.toArray(String[]::new));
  }

  private String out() {
    return out.toString(StandardCharsets.UTF_8);
  }

  private String err() {
    return err.toString(StandardCharsets.UTF_8);
  }

  @Test
  void getOverMutualTlsPrintsTheResources() {
    assertThat(get(tls(true))).as(err()).isZero();
    JsonObject doc = JsonParser.parseString(out()).getAsJsonObject();
    assertThat(doc.getAsJsonArray("resources")).hasSize(2);
    assertThat(peers.identities()).isNotEmpty().containsOnly(SPIFFE_ID);
  }

  @Test
  void getWithoutAClientCertificateIsRefusedAndSaysWhy() {
    assertThat(get(tls(false))).isEqualTo(GetCommand.UNREACHABLE);
    assertThat(err()).isEqualTo("meridian get: cannot get clusters: TLS handshake with " + addr
        + " failed: the server requires a client certificate and this client has none\n");
    assertThat(peers.identities()).isEmpty();
  }

  @Test
  void getFromAServerTheCaDoesNotTrustSaysSo() {
    Path other = TestCerts.ca("other-ca").writeCert(dir.resolve("other.crt"));
    assertThat(get(List.of("--tls-ca", other.toString(), "--tls-cert", client.cert().toString(),
        "--tls-key", client.key().toString()))).isEqualTo(GetCommand.UNREACHABLE);
    assertThat(err()).isEqualTo("meridian get: cannot get clusters: TLS handshake with " + addr
        + " failed: the server's certificate is not issued by a CA this client trusts\n");
  }

  @Test
  void watchOverMutualTlsPrintsTheFirstUpdate() throws Exception {
    List<String> args = new ArrayList<>(List.of("--server", addr, "--type", "clusters", "-o",
        "json"));
    args.addAll(tls(true));
    WatchCommand watch = new WatchCommand(new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    CompletableFuture<Integer> rc = CompletableFuture.supplyAsync(() -> new CommandLine(watch)
        .execute(args.toArray(String[]::new)));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (out().isBlank() && System.nanoTime() < deadline) {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
    }
    watch.stop.countDown();
    assertThat(rc.get(10, TimeUnit.SECONDS)).isZero();
    JsonObject first = JsonParser.parseString(out().lines().findFirst().orElseThrow())
        .getAsJsonObject();
    assertThat(first.get("event").getAsString()).isEqualTo("update");
    assertThat(first.getAsJsonArray("changed")).hasSize(2);
    assertThat(peers.identities()).containsOnly(SPIFFE_ID);
  }

  @Test
  void resolveOverMutualTlsRoutesTheCall() {
    List<String> args = new ArrayList<>(List.of("--server", addr, "--listener", "http", "--path",
        "/helloworld.Greeter/SayHello", "-o", "json"));
    args.addAll(tls(true));
    int rc = new CommandLine(new ResolveCommand(new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8))).execute(args.toArray(String[]::new));
    assertThat(rc).as(err()).isZero();
    assertThat(JsonParser.parseString(out()).getAsJsonObject().get("chosen_endpoint").getAsString())
        .startsWith("127.0.0.1:");
    assertThat(peers.identities()).containsOnly(SPIFFE_ID);
  }

  private String[] status(List<String> tlsArgs) {
    List<String> args = new ArrayList<>(List.of("status", "--server", addr, "--timeout", "5s"));
    args.addAll(tlsArgs);
    StringWriter o = new StringWriter();
    StringWriter e = new StringWriter();
    int code = Main.commandLine().setOut(new PrintWriter(o)).setErr(new PrintWriter(e))
        .execute(args.toArray(String[]::new));
    return new String[] {Integer.toString(code), o.toString(), e.toString()};
  }

  @Test
  void statusOverMutualTlsPrintsTheTable() {
    String[] r = status(tls(true));
    assertThat(r[0]).as(r[2]).isEqualTo("0");
    assertThat(r[1].lines().toList()).hasSize(2).last().asString().startsWith("envoy-tls");
    assertThat(peers.identities()).containsOnly(SPIFFE_ID);
  }

  @Test
  void statusWithoutAClientCertificateSaysWhyAndExits3() {
    String[] r = status(tls(false));
    assertThat(r[0]).isEqualTo("3");
    assertThat(r[2]).isEqualTo("meridian status: TLS handshake with " + addr
        + " failed: the server requires a client certificate and this client has none\n");
  }

  @Test
  void statusInPlaintextToATlsPortHintsAtTheTlsFlags() {
    String[] r = status(List.of());
    assertThat(r[0]).isEqualTo("3");
    // The server closes or resets the connection: gRPC reports either, depending on timing.
    assertThat(r[2]).startsWith("meridian status: ").endsWith(" (a TLS port? then give --tls-ca, "
        + "and --tls-cert/--tls-key for mTLS)\n");
  }

  @Test
  void getInPlaintextToATlsPortHintsAtTheTlsFlags() {
    assertThat(get(List.of())).isEqualTo(GetCommand.UNREACHABLE);
    // The transport's words differ with how the TLS server ends the connection (a reset, or
    // "Network closed for unknown reason"): the hint is what the test is about.
    assertThat(err()).startsWith("meridian get: cannot get clusters: ")
        .endsWith("(a TLS port? then give --tls-ca, and --tls-cert/--tls-key for mTLS)\n");
  }
}
