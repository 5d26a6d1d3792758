package dev.meridian.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.internal.server.MeridianServer;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * A tiny run of the load generator's clients (3 clients × 5 clusters) against an in-JVM Meridian:
 * connect, every cluster changed, one endpoint set changed; each reaches its goal, the last
 * event sends each client only the changed endpoint set, and the serializations the load
 * generator reads from {@code /metrics} are one per changed resource, none per client.
 */
class EndToEndTest {
  @TempDir Path dir;

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  @Timeout(value = 30, unit = TimeUnit.SECONDS)
  void threeClientsFiveClusters(boolean delta) throws Exception {
    Fleet fleet = new Fleet(5, 2);
    Path config = dir.resolve("config.json");
    fleet.writeMeridianConfig(config);
    NioEventLoopGroup group = new NioEventLoopGroup(1);
    List<BenchClient> clients = new ArrayList<>();
    try (MeridianServer server = new MeridianServer(
        new MeridianServer.Options(config, "127.0.0.1", 0, 0, 100)).start()) {
      int http = server.httpPort();
      assertThat(LoadGenerator.serializations(http)).isEqualTo(10); // 5 clusters, 5 endpoint sets
      BenchClient.Shared shared = new BenchClient.Shared(5);
      long t0 = System.nanoTime();
      for (int i = 0; i < 3; i++) {
        BenchClient c = new BenchClient(i, delta, shared,
            NettyChannelBuilder.forAddress("127.0.0.1", server.xdsPort()).usePlaintext()
                .eventLoopGroup(group).channelType(NioSocketChannel.class).directExecutor().build());
        c.arm(BenchClient.Goal.CONNECT, 0, 0, t0);
        clients.add(c);
        c.start();
      }
      await(() -> clients.stream().allMatch(BenchClient::done));
      assertThat(clients).allSatisfy(c -> assertThat(c.latencyMillis()).isPositive());
      awaitQuiet(clients);
      assertThat(LoadGenerator.serializations(http)).isEqualTo(10);

      fleet.changeAllClusters();
      arm(clients, BenchClient.Goal.ALL_CLUSTERS, fleet.clusterGen(), 0);
      fleet.writeMeridianConfig(config);
      await(() -> clients.stream().allMatch(BenchClient::done));
      awaitQuiet(clients);
      assertThat(LoadGenerator.serializations(http)).isEqualTo(15);

      fleet.changeEndpoints(2);
      arm(clients, BenchClient.Goal.ONE_ENDPOINT, Fleet.portFor(fleet.endpointGen(2)), 2);
      fleet.writeMeridianConfig(config);
      await(() -> clients.stream().allMatch(BenchClient::done));
      awaitQuiet(clients);
      assertThat(LoadGenerator.serializations(http)).isEqualTo(16);
      for (BenchClient c : clients) {
        assertThat(c.mismatches()).isZero();
        assertThat(c.responses()).isEqualTo(1); // only the changed endpoint set
        assertThat(c.bytes()).isLessThan(2048);
        assertThat(c.error()).isNull();
      }
    } finally {
      clients.forEach(BenchClient::close);
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    }
  }

  private static void arm(List<BenchClient> clients, BenchClient.Goal goal, int expect, int k) {
    long t0 = System.nanoTime();
    clients.forEach(c -> c.arm(goal, expect, k, t0));
  }

  private static void await(BooleanSupplier condition) throws InterruptedException {
    long deadline = System.currentTimeMillis() + 10_000;
    while (!condition.getAsBoolean()) {
      assertThat(System.currentTimeMillis()).as("timed out").isLessThan(deadline);
      Thread.sleep(10);
    }
  }

  /** Waits until no client received anything for 300 ms (bounded). */
  private static void awaitQuiet(List<BenchClient> clients) throws InterruptedException {
    long last = -1;
    long since = System.currentTimeMillis();
    long deadline = since + 5_000;
    while (System.currentTimeMillis() < deadline) {
      long n = clients.stream().mapToLong(BenchClient::responses).sum();
      if (n != last) {
        last = n;
        since = System.currentTimeMillis();
      } else if (System.currentTimeMillis() - since > 300) {
        return;
      }
      Thread.sleep(20);
    }
  }
}
