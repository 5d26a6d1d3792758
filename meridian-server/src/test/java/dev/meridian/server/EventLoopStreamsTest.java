package dev.meridian.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class EventLoopStreamsTest {
  private final EventLoopGroup loops = new NioEventLoopGroup(2);
  private final ExecutorService pool = Executors.newFixedThreadPool(2);

  @AfterEach
  void stop() throws InterruptedException {
    loops.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    pool.shutdownNow();
  }

  @Test
  void aStreamCreatedOnAnEventLoopRunsItsTasksThereInOrder() throws Exception {
    EventLoopStreams streams = new EventLoopStreams(loops, pool);
    var loop = loops.next();
    Executor stream = loop.submit(streams::get).get(5, TimeUnit.SECONDS);
    List<Integer> ran = new CopyOnWriteArrayList<>();
    List<Boolean> onLoop = new CopyOnWriteArrayList<>();
    CountDownLatch done = new CountDownLatch(1);
    for (int i = 0; i < 100; i++) {
      int n = i;
      stream.execute(() -> {
        ran.add(n);
        onLoop.add(loop.inEventLoop());
      });
    }
    stream.execute(done::countDown);
    assertThat(done.await(5, TimeUnit.SECONDS)).isTrue();
    assertThat(ran).hasSize(100).isSorted();
    assertThat(onLoop).containsOnly(true);
  }

  @Test
  void aStreamCreatedElsewhereGetsASerialExecutorOnThePool() {
    // In-process transports (tests) call the service from their own threads.
    assertThat(new EventLoopStreams(loops, pool).get()).isInstanceOf(SerialExecutor.class);
  }

  @Test
  void aFailingTaskDoesNotStopTheStreamsLaterTasks() throws Exception {
    EventLoopStreams streams = new EventLoopStreams(loops, pool);
    Executor stream = loops.next().submit(streams::get).get(5, TimeUnit.SECONDS);
    CompletableFuture<String> later = new CompletableFuture<>();
    stream.execute(() -> {
      throw new IllegalStateException("boom");
    });
    stream.execute(() -> later.complete("ran"));
    assertThat(later.get(5, TimeUnit.SECONDS)).isEqualTo("ran");
  }

  @Test
  void aTaskArrivingAfterTheLoopsShutDownIsDroppedNotThrown() throws Exception {
    EventLoopStreams streams = new EventLoopStreams(loops, pool);
    Executor stream = loops.next().submit(streams::get).get(5, TimeUnit.SECONDS);
    loops.shutdownGracefully(0, 0, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    assertThatCode(() -> stream.execute(() -> { })).doesNotThrowAnyException();
  }
}
