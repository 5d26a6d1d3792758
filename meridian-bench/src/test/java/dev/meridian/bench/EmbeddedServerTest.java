package dev.meridian.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The load generator's embedded server ({@code --server embedded}: Meridian's public API in an
 * application's main) with 5 clients × 10 clusters, driven by the same stdin commands: connect,
 * one endpoint set changed ({@code Publisher.update}), every cluster changed ({@code
 * Publisher.set}); each client reaches each goal, the endpoint change sends each client only the
 * changed endpoint set, and {@code /metrics} counts what the publisher serialized.
 */
class EmbeddedServerTest {
  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void fiveClientsTenClusters(boolean delta) throws Exception {
    PipedOutputStream toServer = new PipedOutputStream();
    PipedInputStream serverIn = new PipedInputStream(toServer);
    PipedInputStream fromServer = new PipedInputStream(64 * 1024);
    PrintStream serverOut = new PrintStream(new PipedOutputStream(fromServer), true,
        StandardCharsets.UTF_8);
    PrintWriter commands = new PrintWriter(toServer, true, StandardCharsets.UTF_8);
    BufferedReader answers = new BufferedReader(
        new InputStreamReader(fromServer, StandardCharsets.UTF_8));
    Thread server = new Thread(() -> {
      try {
        EmbeddedServerMain.run(new String[] {"0", "10", "2", "--http-port", "0"}, serverIn,
            serverOut);
      } catch (Exception e) {
        serverOut.println("failed " + e);
      } finally {
        serverOut.close();
      }
    }, "embedded-server");
    server.start();
    NioEventLoopGroup group = new NioEventLoopGroup(1);
    List<BenchClient> clients = new ArrayList<>();
    try {
      String[] ready = answers.readLine().split(" "); // ready <port> http <port>
      assertThat(ready[0]).isEqualTo("ready");
      int port = Integer.parseInt(ready[1]);
      int http = Integer.parseInt(ready[3]);
      assertThat(LoadGenerator.serializations(http)).isEqualTo(20); // 10 clusters, 10 sets

      BenchClient.Shared shared = new BenchClient.Shared(10);
      long t0 = System.nanoTime();
      for (int i = 0; i < 5; i++) {
        BenchClient c = new BenchClient(i, delta, shared,
            NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext()
                .eventLoopGroup(group).channelType(NioSocketChannel.class).directExecutor().build());
        c.arm(BenchClient.Goal.CONNECT, 0, 0, t0);
        clients.add(c);
        c.start();
      }
      awaitAll(clients);

      // One endpoint set first: a connected client has nothing else in flight (after every
      // cluster changed, its re-subscription's answer may still be on the way).
      Fleet fleet = new Fleet(10, 2); // the server's fleet, followed here
      fleet.changeEndpoints(3);
      arm(clients, BenchClient.Goal.ONE_ENDPOINT, Fleet.portFor(fleet.endpointGen(3)), 3);
      commands.println("one-endpoint 3");
      assertThat(answers.readLine()).startsWith("applied 1 ").endsWith(" changed=1");
      awaitAll(clients);
      for (BenchClient c : clients) {
        assertThat(c.responses()).isEqualTo(1); // only the changed endpoint set
        assertThat(c.bytes()).isLessThan(2048);
      }
      assertThat(LoadGenerator.serializations(http)).isEqualTo(21);

      fleet.changeAllClusters();
      arm(clients, BenchClient.Goal.ALL_CLUSTERS, fleet.clusterGen(), 0);
      commands.println("all-clusters");
      assertThat(answers.readLine()).startsWith("applied 2 ").endsWith(" changed=10");
      awaitAll(clients);
      for (BenchClient c : clients) {
        assertThat(c.mismatches()).isZero();
        assertThat(c.error()).isNull();
      }
      // Of the set's 20 new messages only the 10 changed clusters are serialized: the endpoint
      // sets equal those in force.
      assertThat(LoadGenerator.serializations(http)).isEqualTo(31);

      commands.println("quit");
      server.join(30_000);
      assertThat(server.isAlive()).isFalse();
    } finally {
      clients.forEach(BenchClient::close);
      commands.close();
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    }
  }

  private static void arm(List<BenchClient> clients, BenchClient.Goal goal, int expect, int k) {
    long t0 = System.nanoTime();
    clients.forEach(c -> c.arm(goal, expect, k, t0));
  }

  private static void awaitAll(List<BenchClient> clients) throws InterruptedException {
    for (BenchClient c : clients) {
      assertThat(c.awaitDone(10_000)).as("client reached its goal").isTrue();
    }
  }
}
