package dev.meridian.server;

import static org.assertj.core.api.Assertions.assertThatCode;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
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
}
