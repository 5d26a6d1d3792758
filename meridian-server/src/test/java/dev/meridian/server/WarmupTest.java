package dev.meridian.server;

import static dev.meridian.server.OpsFixture.CDS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.protocol.HeartbeatPolicy;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The startup warm-up: it really serves its synthetic fleet, and leaves nothing behind. */
class WarmupTest {
  @TempDir Path dir;
  private final ExecutorService pool = Executors.newFixedThreadPool(2);
  private final List<DiscoveryHub> hubs = new ArrayList<>();
  private final AtomicReference<Server> built = new AtomicReference<>();

  @AfterEach
  void stop() {
    pool.shutdownNow();
  }

  /** A JIT that reports a queue of {@code queued} and no compile time: settled when 0. */
  private static Warmup.Jit jit(int queued) {
    return new Warmup.Jit() {
      @Override
      public long compileMillis() {
        return 0;
      }

      @Override
      public int queued() {
        return queued;
      }
    };
  }

  /** A warm-up whose JIT never catches up: its rounds or budget end it. */
  private Warmup warmup(int clusters, int clients, int rounds) {
    return warmup(clusters, clients, rounds, jit(7));
  }

  private Warmup warmup(int clusters, int clients, int rounds, Warmup.Jit jit) {
    DiscoveryHub real = new DiscoveryHub();
    real.fanOutOn(pool, 2);
    return new Warmup((address, hub) -> {
      hubs.add(hub);
      NettyServerBuilder b = NettyServerBuilder.forAddress(address).directExecutor();
      XdsServices.all(hub, Clock.systemUTC(), pool, HeartbeatPolicy.DEFAULT).forEach(b::addService);
      Server s = b.build();
      built.set(s);
      return s;
    }, real::warmupSibling, clusters, clients, rounds, jit).inDirectory(dir);
  }

  @Test
  void everyEventOfEveryRoundReachesEverySyntheticClient() throws Exception {
    Warmup.Report r = warmup(20, 6, 3).run(Duration.ofSeconds(60), () -> false);

    assertThat(r.end()).isEqualTo(Warmup.End.ROUNDS);
    assertThat(r.rounds()).isEqualTo(3);
    // connect, then per round: every cluster changed, the small changes, a burst (one event,
    // reached once every client holds its last change), a reconnect
    assertThat(r.events()).isEqualTo(1 + 3 * (1 + Warmup.SMALL_CHANGES + 1 + 1));
    // each client got at least one response per event it saw (SotW and Delta both took part)
    assertThat(r.responses()).isGreaterThanOrEqualTo(6L * (1 + 3 * (1 + Warmup.SMALL_CHANGES)));
  }

  @Test
  void theWarmupEndsOnceTheJitHasCaughtUp() throws Exception {
    Warmup.Report r = warmup(20, 6, 1_000, jit(0)).run(Duration.ofSeconds(60), () -> false);

    assertThat(r.end()).isEqualTo(Warmup.End.SETTLED);
    assertThat(r.rounds()).isEqualTo(Warmup.MIN_ROUNDS); // the first rounds always run
  }

  @Test
  void aJitStillCompilingKeepsTheWarmupGoing() throws Exception {
    // Queue empty, but the compile time grows by a second per call: not caught up yet.
    long[] compiled = {0};
    Warmup.Jit busy = new Warmup.Jit() {
      @Override
      public long compileMillis() {
        return compiled[0] += 1_000;
      }

      @Override
      public int queued() {
        return 0;
      }
    };
    Warmup.Report r = warmup(20, 6, 5, busy).run(Duration.ofSeconds(60), () -> false);

    assertThat(r.end()).isEqualTo(Warmup.End.ROUNDS);
    assertThat(r.rounds()).isEqualTo(5);
  }

  @Test
  void thePushPathIsOptimizedOnlyWhenItsC2CodeIsInUse() {
    String codelist = """
        12 4 0 dev.meridian.protocol.XdsStream.onConfig(Ldev/meridian/protocol/ServedConfig;\
        Ljava/util/Map;)Ljava/util/List; [0x1, 0x2 - 0x3]
        13 3 0 dev.meridian.protocol.XdsStream.onRequest(Lcom/google/protobuf/Message;\
        Ldev/meridian/protocol/ServedConfig;)Ljava/util/List; [0x1, 0x2 - 0x3]
        14 4 2 dev.meridian.protocol.DeltaTypeState.respond(I)V [0x1, 0x2 - 0x3]
        15 4 0 dev.meridian.protocol.XdsStream.onConfigHere()V [0x1, 0x2 - 0x3]
        16 4 0 dev.meridian.protocol.XdsStream.onConfig(I)V [0x1, 0x2 - 0x3]
        """;
    List<String> path = List.of("dev.meridian.protocol.XdsStream.onConfig",
        "dev.meridian.protocol.XdsStream.onRequest", "dev.meridian.protocol.DeltaTypeState.respond");

    // onConfig: C2 code in use (two overloads count once); onRequest: C1 only; respond: its C2
    // code is not entrant (deoptimized); a longer name sharing the prefix is another method.
    assertThat(Warmup.Jit.optimizedIn(codelist, path)).isEqualTo(1);
    assertThat(Warmup.Jit.optimizedIn("", path)).isZero();
    assertThat(Warmup.Jit.hotspot().optimized(Warmup.PUSH_PATH)).isBetween(0,
        Warmup.PUSH_PATH.size()); // this JVM tells
  }

  @Test
  void thePushPathNamesMethodsThatExist() throws Exception {
    for (String m : Warmup.PUSH_PATH) {
      int dot = m.lastIndexOf('.');
      Class<?> c = Class.forName(m.substring(0, dot));
      String name = m.substring(dot + 1);
      assertThat(Stream.of(c.getDeclaredMethods()).anyMatch(x -> x.getName().equals(name)))
          .as(m).isTrue();
    }
  }

  @Test
  void aPushPathNotYetOptimizedKeepsTheWarmupGoing() throws Exception {
    Warmup.Jit c1Only = new Warmup.Jit() {
      @Override
      public long compileMillis() {
        return 0;
      }

      @Override
      public int queued() {
        return 0;
      }

      @Override
      public int optimized(List<String> methods) {
        return methods.size() - 1;
      }
    };
    Warmup.Report r = warmup(20, 6, 5, c1Only).run(Duration.ofSeconds(60), () -> false);

    assertThat(r.end()).isEqualTo(Warmup.End.ROUNDS);
    assertThat(r.pushPathOptimized()).isEqualTo(Warmup.PUSH_PATH.size() - 1);
  }

  @Test
  void theCompileQueueIsReadFromTheDiagnosticCommandsOutput() {
    String busy = """
        Current compiles:\s
        C2 CompilerThread0  7899 %     4       com.example.A::read @ 47 (201 bytes)
        C1 CompilerThread0  7960       2       com.example.B::mergeFrom (693 bytes)

        C1 compile queue:
        7959       1       com.example.C::opIsStateful (2 bytes)

        C2 compile queue:
        4295       4       com.example.D::writeString (12 bytes)
        4546   !   4       com.example.E::bucket (7 bytes)
        """;
    String idle = """
        Current compiles:\s

        C1 compile queue:
        Empty

        C2 compile queue:
        Empty
        """;

    assertThat(Warmup.Jit.queuedTasks(busy)).isEqualTo(3); // running compiles are not queued
    assertThat(Warmup.Jit.queuedTasks(idle)).isZero();
    assertThat(Warmup.Jit.hotspot().queued()).isGreaterThanOrEqualTo(0); // this JVM tells
  }

  @Test
  void nothingOfTheWarmupIsLeftWhenItReturns() throws Exception {
    warmup(10, 4, 1).run(Duration.ofSeconds(60), () -> false);

    assertThat(built.get().isTerminated()).isTrue(); // its port is closed
    assertThat(hubs).hasSize(1);
    OpsFixture.await("warm-up streams closed", () -> hubs.get(0).streamCount() == 0
        && hubs.get(0).registry().size() == 0);
    try (Stream<Path> left = Files.list(dir)) {
      assertThat(left).isEmpty(); // the synthetic config is removed
    }
  }

  @Test
  void theBudgetBoundsTheWarmup() throws Exception {
    long started = System.nanoTime();
    Warmup.Report r = warmup(200, 40, 1_000).run(Duration.ofMillis(300), () -> false);

    assertThat(r.end()).isEqualTo(Warmup.End.BUDGET);
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(20));
  }

  @Test
  void aShutdownDuringTheWarmupEndsItAfterTheCurrentEvent() throws Exception {
    Warmup.Report r = warmup(10, 4, 1_000).run(Duration.ofSeconds(60), () -> true);

    assertThat(r.end()).isEqualTo(Warmup.End.STOPPED);
    assertThat(r.rounds()).isZero();
    assertThat(r.events()).isEqualTo(1); // the connect only
  }

  @Test
  void aWarmedUpServerServesOnlyItsOwnConfigAndCountsNoWarmupStreams() throws Exception {
    OpsFixture f = new OpsFixture(dir, o -> o.withWarmup(Duration.ofMillis(500)));
    try {
      assertThat(f.server.hub().streamCount()).isZero();
      assertThat(f.server.hub().registry().size()).isZero();
      assertThat(f.get("/readyz").statusCode()).isEqualTo(200);
      OpsFixture.AdsClient a = f.ads("envoy-a", "edge");
      DiscoveryResponse r = a.subscribe(CDS);
      List<String> names = new ArrayList<>();
      for (var any : r.getResourcesList()) {
        names.add(any.unpack(Cluster.class).getName());
      }
      assertThat(names).containsExactlyInAnyOrder("greeter-v1", "greeter-v2");
      assertThat(f.get("/metrics").body()).doesNotContain("warmup-");
      assertThat(f.server.hub().registry().size()).isEqualTo(1);
    } finally {
      f.close();
    }
  }
}
