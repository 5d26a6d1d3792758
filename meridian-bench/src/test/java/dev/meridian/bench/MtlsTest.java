package dev.meridian.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.meridian.internal.server.MeridianServer;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The load generator over mTLS ({@code --tls true}, issue 20): its certificates serve, its clients
 * get every cluster and endpoint set, and the server sees each client's SPIFFE ID; a whole run
 * against a real Meridian process and against java-control-plane says mTLS in its rows.
 */
class MtlsTest {
  private static final Pattern IDENTITY = Pattern.compile("\"identity\":\\s*\"([^\"]*)\"");

  @TempDir Path dir;

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void clientsConnectOverMtlsAndTheServerSeesTheirIdentity() throws Exception {
    BenchTls tls = BenchTls.create(dir.resolve("tls"));
    Path config = dir.resolve("config.json");
    new Fleet(10, 2).writeMeridianConfig(config);
    NioEventLoopGroup group = new NioEventLoopGroup(1);
    List<BenchClient> clients = new ArrayList<>();
    try (MeridianServer server = new MeridianServer(
        new MeridianServer.Options(config, "127.0.0.1", 0, 0, 100).withTls(
            new MeridianServer.Options.Tls(tls.server.cert(), tls.server.key(), tls.ca))).start()) {
      BenchClient.Shared shared = new BenchClient.Shared(10);
      long t0 = System.nanoTime();
      for (int i = 0; i < 5; i++) {
        BenchClient c = new BenchClient(i, i % 2 == 1, shared, LoadGenerator.channelBuilder(tls,
            server.xdsPort(), group, NioSocketChannel.class, 1 << 20).build());
        c.arm(BenchClient.Goal.CONNECT, 0, 0, t0);
        clients.add(c);
        c.start();
      }
      // Without a client certificate, the server does not let a client in.
      BenchClient plaintext = new BenchClient(5, true, shared, LoadGenerator.channelBuilder(null,
          server.xdsPort(), group, NioSocketChannel.class, 1 << 20).build());
      plaintext.start();

      long deadline = System.currentTimeMillis() + 30_000;
      while (!(clients.stream().allMatch(BenchClient::done) && plaintext.error() != null)) {
        assertThat(System.currentTimeMillis()).as("timed out").isLessThan(deadline);
        Thread.sleep(10);
      }
      for (BenchClient c : clients) {
        assertThat(c.error()).isNull();
        assertThat(c.mismatches()).isZero();
      }
      assertThat(plaintext.responses()).isZero();
      plaintext.close();

      HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
              URI.create("http://127.0.0.1:" + server.httpPort() + "/clients")).build(),
          HttpResponse.BodyHandlers.ofString());
      List<String> identities = new ArrayList<>();
      for (Matcher m = IDENTITY.matcher(r.body()); m.find(); ) {
        identities.add(m.group(1));
      }
      assertThat(identities).hasSize(5).containsOnly(BenchTls.CLIENT_IDENTITY);
    } finally {
      clients.forEach(BenchClient::close);
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    }
  }

  /**
   * {@code --tls true}, end to end: 5 clients × 10 clusters, connect, every cluster changed and one
   * endpoint set changed, against the packaged Meridian ({@code serve --tls-cert --tls-key
   * --tls-client-ca}) or JcpServer from this class path.
   */
  @ParameterizedTest(name = "--server {0} --tls true")
  @ValueSource(strings = {"meridian", "jcp"})
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  void aRunOverMtlsReachesEveryClientAndSaysSo(String server) throws Exception {
    Path jar = Path.of("..", "meridian-cli", "target", "meridian.jar");
    if (server.equals("meridian")) {
      assumeTrue(Files.exists(jar), "meridian.jar is packaged by a reactor build (mvn verify)");
    }
    Path work = dir.resolve("work");
    Path out = dir.resolve("rows.md");

    List<LoadGenerator.Result> results = new LoadGenerator(new String[] {
        "--server", server, "--tls", "true", "--clients", "5", "--clusters", "10",
        "--variant", "delta", "--event", "all", "--generator-warmup", "false",
        "--meridian-jar", jar.toString(), "--bench-jar", System.getProperty("java.class.path"),
        "--server-jvm", "", "--client-transport", "nio", "--settle-ms", "200",
        "--timeout", "60", "--work-dir", work.toString(), "--out", out.toString()}).run();

    assertThat(results).extracting(LoadGenerator.Result::event)
        .containsExactly("connect", "all-clusters", "one-endpoint");
    for (LoadGenerator.Result r : results) {
      assertThat(r.reached()).as(r.event()).isEqualTo(5);
      assertThat(r.mismatches()).as(r.event()).isZero();
      assertThat(r.transport()).isEqualTo("mTLS");
    }
    assertThat(Files.readAllLines(out)).hasSize(3)
        .allSatisfy(row -> assertThat(row).startsWith(
            "| " + LoadGenerator.serverLabel(server, "yaml") + " | mTLS | 10 | 5 | delta |"));
    assertThat(work.resolve("tls/ca.crt")).exists();
    if (server.equals("meridian")) {
      // The server saw each client's certificate: stream_open logs its SPIFFE ID.
      String log = Files.readString(work.resolve("server-meridian-delta-10x5-mtls.log"));
      assertThat(log.lines().filter(l -> l.contains("stream_open")
          && l.contains("identity=" + BenchTls.CLIENT_IDENTITY))).hasSize(5);
    }
  }
}
