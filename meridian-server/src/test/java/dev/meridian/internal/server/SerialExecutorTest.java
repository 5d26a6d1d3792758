package dev.meridian.internal.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import java.util.ArrayList;
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
        await(release);
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

  @Test
  void tasksFromManyThreadsRunOneAtATimeInEachThreadsOrder() throws Exception {
    // Transport threads hand over requests while fan-out workers push: every task runs, never two
    // at once, and each submitter's tasks in the order it submitted them.
    ExecutorService pool = Executors.newFixedThreadPool(3);
    ExecutorService submitters = Executors.newFixedThreadPool(4);
    try {
      SerialExecutor serial = new SerialExecutor(pool);
      int perThread = 5_000;
      List<List<Integer>> seen = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        seen.add(new ArrayList<>());
      }
      int[] running = {0};
      boolean[] overlapped = {false};
      CountDownLatch all = new CountDownLatch(4 * perThread);
      for (int t = 0; t < 4; t++) {
        int thread = t;
        submitters.execute(() -> {
          for (int i = 0; i < perThread; i++) {
            int n = i;
            Runnable task = () -> {
              if (++running[0] != 1) {
                overlapped[0] = true;
              }
              seen.get(thread).add(n); // unsynchronized on purpose: serial execution makes it safe
              running[0]--;
              all.countDown();
            };
            if (n % 2 == 0) {
              serial.execute(task);
            } else {
              serial.runOrExecute(task);
            }
          }
        });
      }
      // (Every task's writes happen before its countDown, so this thread may read the lists.)
      assertThat(all.await(20, TimeUnit.SECONDS)).isTrue();
      assertThat(overlapped[0]).isFalse();
      for (List<Integer> s : seen) {
        assertThat(s).hasSize(perThread).isSorted();
      }
    } finally {
      submitters.shutdownNow();
      pool.shutdownNow();
    }
  }

  @Test
  void anErrorEscapingATaskDoesNotStrandTheTasksBehindIt() throws Exception {
    ExecutorService pool = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r);
      t.setUncaughtExceptionHandler((thread, e) -> { }); // the Error is this test's own
      return t;
    });
    try {
      SerialExecutor serial = new SerialExecutor(pool);
      CountDownLatch release = new CountDownLatch(1);
      CountDownLatch after = new CountDownLatch(1);
      serial.execute(() -> {
        await(release);
        throw new AssertionError("an Error, not caught as a RuntimeException is");
      });
      serial.execute(after::countDown); // queued behind the failing task
      release.countDown();
      assertThat(after.await(5, TimeUnit.SECONDS)).isTrue();
      // Still usable, inline when idle.
      Thread[] ranOn = new Thread[1];
      CountDownLatch idle = new CountDownLatch(1);
      serial.execute(idle::countDown);
      assertThat(idle.await(5, TimeUnit.SECONDS)).isTrue();
      awaitInline(serial, ranOn);
      assertThat(ranOn[0]).isSameAs(Thread.currentThread());
    } finally {
      pool.shutdownNow();
    }
  }

  /** Holds a task (and so its executor) until {@code release}, at most 5 s. */
  private static void await(CountDownLatch release) {
    try {
      release.await(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Runs a task with runOrExecute until the executor is idle enough to run it inline. */
  private static void awaitInline(SerialExecutor serial, Thread[] ranOn) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (System.nanoTime() < deadline) {
      CountDownLatch ran = new CountDownLatch(1);
      serial.runOrExecute(() -> {
        ranOn[0] = Thread.currentThread();
        ran.countDown();
      });
      assertThat(ran.await(5, TimeUnit.SECONDS)).isTrue();
      if (ranOn[0] == Thread.currentThread()) {
        return;
      }
    }
  }
}
