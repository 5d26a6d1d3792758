package dev.meridian.server;

import dev.meridian.protocol.Outcome;
import dev.meridian.protocol.ResourceType;
import dev.meridian.protocol.ServedConfig;
import dev.meridian.protocol.SotwStream;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
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
 * Adapts one gRPC SotW stream to the protocol core. Everything runs on the stream's serial executor;
 * this class only carries out {@link Outcome}s.
 */
final class SotwStreamHandler implements StreamObserver<DiscoveryRequest>, DiscoveryHub.Listener,
    ConnectedStream {
  private final DiscoveryHub hub;
  private final SotwStream stream;
  private final ServerCallStreamObserver<DiscoveryResponse> responses;
  private final SerialExecutor executor;
  private final String description;
  /** Responses waiting for the transport to be ready; at most one per type (flow control). */
  private final ArrayDeque<DiscoveryResponse> backlog = new ArrayDeque<>();
  private boolean done;
  /** Operations: id, peer, metrics and log lines (admin, CSDS); see ConnectedStream. */
  private final StreamTelemetry telemetry;
  private final ResourceType serviceType;
  /** Shutting down: end the stream as soon as the backlog is written. */
  private boolean draining;

  SotwStreamHandler(DiscoveryHub hub, ResourceType serviceType, Clock clock,
      StreamObserver<DiscoveryResponse> responses, SerialExecutor executor, String description) {
    this.hub = hub;
    this.stream = serviceType == null ? SotwStream.ads(clock) : SotwStream.perType(serviceType, clock);
    this.responses = (ServerCallStreamObserver<DiscoveryResponse>) responses;
    this.executor = executor;
    this.description = description;
    this.serviceType = serviceType;
    this.telemetry = new StreamTelemetry(hub, StreamInfo.SOTW, serviceType, description, clock);
    hub.registry().register(this);
    this.responses.setOnReadyHandler(() -> executor.execute(this::flush));
    this.responses.setOnCancelHandler(() -> executor.execute(() -> finish("cancelled")));
    hub.register(this);
  }

  @Override
  public void onNext(DiscoveryRequest request) {
    executor.execute(() -> {
      if (!done) {
        telemetry.request(serviceType != null ? serviceType
            : ResourceType.fromTypeUrl(request.getTypeUrl()).orElse(null));
        apply(stream.onRequest(request, hub.current()));
        telemetry.announce(stream.node(), stream.group());
      }
    });
  }

  @Override
  public void onConfig(ServedConfig config, Map<String, Map<ResourceType, Set<String>>> changes) {
    long at = System.nanoTime();
    executor.execute(() -> {
      if (!done) {
        telemetry.configChanged(at);
        apply(stream.onConfig(config, changes));
      }
    });
  }

  @Override
  public void onError(Throwable t) {
    executor.execute(() -> finish("client error: " + Status.fromThrowable(t)));
  }

  @Override
  public void onCompleted() {
    executor.execute(() -> {
      if (!done) {
        finish();
        responses.onCompleted();
      }
    });
  }

  private void apply(List<Outcome> outcomes) {
    for (Outcome o : outcomes) {
      if (done) {
        return; // ended meanwhile (a drain that completed on this very send)
      }
      if (o instanceof Outcome.Send s) {
        DiscoveryResponse r = (DiscoveryResponse) s.response();
        telemetry.sent(s.type(), r.getSerializedSize());
        backlog.add(r);
        flush();
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

  private void finish() {
    finish("client closed");
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
    CompletableFuture<ClientStatus> f =
        new CompletableFuture<>();
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

  SotwStream stream() {
    return stream;
  }
}
