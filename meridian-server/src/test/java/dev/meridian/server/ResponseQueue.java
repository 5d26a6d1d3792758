package dev.meridian.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** The receiving side of a raw test stream: responses queued in order, and how the stream ended. */
final class ResponseQueue<R> implements StreamObserver<R> {
  static final Duration WAIT = Duration.ofSeconds(10);

  final BlockingQueue<R> responses = new LinkedBlockingQueue<>();
  final CompletableFuture<Status> closed = new CompletableFuture<>();

  @Override
  public void onNext(R r) {
    responses.add(r);
  }

  @Override
  public void onError(Throwable t) {
    closed.complete(Status.fromThrowable(t));
  }

  @Override
  public void onCompleted() {
    closed.complete(Status.OK);
  }

  /** The next response; fails the test if none comes within {@link #WAIT}. */
  R take() throws InterruptedException {
    R r = responses.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    assertThat(r).as("a response within %s", WAIT).isNotNull();
    return r;
  }

  Status awaitClose() throws Exception {
    return closed.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
  }
}
