package dev.meridian.server;

import com.google.protobuf.Message;
import dev.meridian.protocol.Outcome;
import dev.meridian.protocol.ResourceType;
import dev.meridian.protocol.ServedConfig;
import dev.meridian.protocol.XdsStream;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;

/**
 * Adapts one gRPC xDS stream (SotW or Delta, ADS or per-type) to the protocol core. Everything runs
 * on the stream's serial executor; this class only carries out {@link Outcome}s and reports to
 * operations (registry, metrics, logs).
 *
 * @param <Q> request message
 * @param <R> response message
 */
final class StreamHandler<Q extends Message, R extends Message>
    implements StreamObserver<Q>, DiscoveryHub.Listener, ConnectedStream {
  private final DiscoveryHub hub;
  private final XdsStream<Q, ?> stream;
  private final ServerCallStreamObserver<R> responses;
  private final SerialExecutor executor;
  /** Responses waiting for the transport to be ready; at most one per type (flow control). */
  private final ArrayDeque<R> backlog = new ArrayDeque<>();
  private boolean done;
  private volatile boolean wantsTick;
  /** Operations: id, peer, metrics and log lines (admin, CSDS); see ConnectedStream. */
  private final StreamTelemetry telemetry;
  /** Shutting down: end the stream as soon as the backlog is written. */
  private boolean draining;

  StreamHandler(DiscoveryHub hub, XdsStream<Q, ?> stream, StreamObserver<R> responses,
      SerialExecutor executor, String description, Clock clock) {
    this.hub = hub;
    this.stream = stream;
    this.responses = (ServerCallStreamObserver<R>) responses;
    this.executor = executor;
    this.telemetry = new StreamTelemetry(hub,
        stream.variant().equals("Delta") ? StreamInfo.DELTA : StreamInfo.SOTW,
        stream.serviceType(), description, clock);
    hub.registry().register(this);
    this.responses.setOnReadyHandler(() -> executor.execute(this::flush));
    this.responses.setOnCancelHandler(() -> executor.execute(() -> finish("cancelled")));
    hub.register(this);
  }

  @Override
  public void onNext(Q request) {
    executor.execute(() -> {
      if (!done) {
        telemetry.request(stream.requestType(request));
        apply(stream.onRequest(request, hub.current()));
        telemetry.announce(stream.node(), stream.group());
      }
    });
  }

  @Override
  public void onConfig(ServedConfig config, Map<String, Map<ResourceType, Set<String>>> changes) {
    executor.execute(configTask(config, changes));
  }

  @Override
  public void onConfigHere(ServedConfig config,
      Map<String, Map<ResourceType, Set<String>>> changes) {
    executor.runOrExecute(configTask(config, changes));
  }

  private Runnable configTask(ServedConfig config,
      Map<String, Map<ResourceType, Set<String>>> changes) {
    long at = System.nanoTime();
    return () -> {
      if (!done) {
        telemetry.configChanged(at);
        apply(stream.onConfig(config, changes));
      }
    };
  }

  @Override
  public void onTick(ServedConfig config) {
    executor.execute(() -> {
      if (!done) {
        apply(stream.onTick(config));
      }
    });
  }

  @Override
  public boolean wantsTick() {
    return wantsTick;
  }

  @Override
  public void onError(Throwable t) {
    executor.execute(() -> finish("client error: " + Status.fromThrowable(t)));
  }

  @Override
  public void onCompleted() {
    executor.execute(() -> {
      if (!done) {
        finish("client closed");
        responses.onCompleted();
      }
    });
  }

  private void apply(List<Outcome> outcomes) {
    carryOut(outcomes);
    wantsTick = stream.wantsTick();
  }

  @SuppressWarnings("unchecked")
  private void carryOut(List<Outcome> outcomes) {
    for (Outcome o : outcomes) {
      if (done) {
        return; // ended meanwhile (a drain that completed on this very send)
      }
      if (o instanceof Outcome.Send s) {
        R r = (R) s.response();
        telemetry.sent(s.type(), r.getSerializedSize());
        if (backlog.isEmpty() && !draining && responses.isReady()) {
          responses.onNext(r); // straight through: no store into the long-lived backlog
        } else {
          backlog.add(r);
          flush();
        }
      } else if (o instanceof Outcome.Nacked n) {
        telemetry.nacked(n.nack(), stream.group());
      } else if (o instanceof Outcome.Ack a) {
        telemetry.acked(a.type(), a.version());
      } else if (o instanceof Outcome.Ignored i) {
        telemetry.ignored(i.type(), i.reason());
      } else if (o instanceof Outcome.Close c) {
        finish("closed by server: " + c.code() + ": " + c.message());
        responses.onError(GrpcStatuses.toStatus(c).asRuntimeException());
        return;
      }
    }
  }

  /** Writes what the transport can take now; the rest waits for the on-ready callback. */
  private void flush() {
    while (!done && !backlog.isEmpty() && responses.isReady()) {
      responses.onNext(backlog.poll());
    }
    if (draining && !done && backlog.isEmpty()) {
      finish("server shutting down");
      responses.onError(Status.UNAVAILABLE.withDescription("server shutting down")
          .asRuntimeException());
    }
  }

  private void finish(String reason) {
    if (!done) {
      done = true;
      backlog.clear();
      hub.unregister(this);
      hub.registry().unregister(this);
      telemetry.closed(stream.node(), stream.group(), reason);
    }
  }

  @Override
  public StreamInfo info() {
    return telemetry.info;
  }

  @Override
  public CompletableFuture<ClientStatus> status() {
    CompletableFuture<ClientStatus> f = new CompletableFuture<>();
    try {
      executor.execute(() -> f.complete(
          new ClientStatus(telemetry.info, stream.node(), stream.group(), stream.status())));
    } catch (RejectedExecutionException e) {
      f.completeExceptionally(e);
    }
    return f;
  }

  /**
   * Ends the stream once every queued response is handed to the transport (gRPC writes them before
   * the trailers); a client too slow to take them is cut by the server's shutdown deadline.
   */
  @Override
  public void drain() {
    executor.execute(() -> {
      if (!done) {
        draining = true;
        flush();
      }
    });
  }

  XdsStream<Q, ?> stream() {
    return stream;
  }
}
