package dev.meridian.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class SerialExecutorTest {
  @Test
  void aTaskArrivingAfterThePoolShutDownIsDroppedNotThrown() {
    // A stream's cancel callback can arrive after MeridianServer.close() shut the pool down; it
    // used to surface as a RejectedExecutionException logged by gRPC.
    ExecutorService pool = Executors.newSingleThreadExecutor();
    pool.shutdownNow();
    SerialExecutor serial = new SerialExecutor(pool);
    assertThatCode(() -> serial.execute(() -> { })).doesNotThrowAnyException();
    assertThatCode(() -> serial.execute(() -> { })).doesNotThrowAnyException();
  }

  @Test
  void anIdleStreamRunsAConfigPushOnTheCallingThread() {
    // A fan-out worker pushes to a chunk of streams: an idle one needs no hand-off to the pool.
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      SerialExecutor serial = new SerialExecutor(pool);
      Thread[] ranOn = new Thread[1];
      serial.runOrExecute(() -> ranOn[0] = Thread.currentThread());
      assertThat(ranOn[0]).isSameAs(Thread.currentThread());
      // A failing task is logged; the executor stays usable.
      serial.runOrExecute(() -> {
        throw new IllegalStateException("boom");
      });
      serial.runOrExecute(() -> ranOn[0] = null);
      assertThat(ranOn[0]).isNull();
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aBusyStreamQueuesTheConfigPushBehindWhatIsRunning() throws Exception {
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      SerialExecutor serial = new SerialExecutor(pool);
      CountDownLatch started = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      CountDownLatch done = new CountDownLatch(1);
      List<String> order = new CopyOnWriteArrayList<>();
      List<Thread> threads = new CopyOnWriteArrayList<>();
      serial.execute(() -> {
        started.countDown();
        try {
          release.await(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        order.add("request");
      });
      assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
      serial.runOrExecute(() -> {
        order.add("push");
        threads.add(Thread.currentThread());
        done.countDown();
      });
      assertThat(order).isEmpty(); // not run inline while the stream's earlier task runs
      release.countDown();
      assertThat(done.await(5, TimeUnit.SECONDS)).isTrue();
      assertThat(order).containsExactly("request", "push");
      assertThat(threads).doesNotContain(Thread.currentThread());
    } finally {
      pool.shutdownNow();
    }
  }
}
