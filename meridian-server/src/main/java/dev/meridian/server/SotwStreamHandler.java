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

/**
 * Adapts one gRPC SotW stream to the protocol core. Everything runs on the stream's serial executor;
 * this class only carries out {@link Outcome}s.
 */
final class SotwStreamHandler implements StreamObserver<DiscoveryRequest>, DiscoveryHub.Listener,
    ConnectedStream {
  private static final System.Logger LOG = System.getLogger("dev.meridian.server.xds");

  private final DiscoveryHub hub;
  private final SotwStream stream;
  private final ServerCallStreamObserver<DiscoveryResponse> responses;
  private final SerialExecutor executor;
  private final String description;
  /** Responses waiting for the transport to be ready; at most one per type (flow control). */
  private final ArrayDeque<DiscoveryResponse> backlog = new ArrayDeque<>();
  private boolean done;
  // --- operations (admin, CSDS, metrics, logs); see ConnectedStream ---
  private final StreamInfo info;
  private final ResourceType serviceType;
  private boolean announced;
  private final java.util.EnumSet<ResourceType> requestedTypes =
      java.util.EnumSet.noneOf(ResourceType.class);
  /** When the latest config change reached this stream (System.nanoTime), 0 if none yet. */
  private long configChangedAt;
  /** Per type: the config change a response in flight carries, for the push latency histogram. */
  private final java.util.EnumMap<ResourceType, Long> pushStartedAt =
      new java.util.EnumMap<>(ResourceType.class);
  private final java.util.EnumMap<ResourceType, Long> pushedChange =
      new java.util.EnumMap<>(ResourceType.class);

  SotwStreamHandler(DiscoveryHub hub, ResourceType serviceType, Clock clock,
      StreamObserver<DiscoveryResponse> responses, SerialExecutor executor, String description) {
    this.hub = hub;
    this.stream = serviceType == null ? SotwStream.ads(clock) : SotwStream.perType(serviceType, clock);
    this.responses = (ServerCallStreamObserver<DiscoveryResponse>) responses;
    this.executor = executor;
    this.description = description;
    this.serviceType = serviceType;
    this.info = new StreamInfo(hub.registry().nextId(), StreamInfo.SOTW,
        StreamInfo.service(serviceType), description, PeerAddress.current(), clock.instant());
    hub.registry().register(this);
    hub.metrics().streamOpened(StreamInfo.SOTW);
    this.responses.setOnReadyHandler(() -> executor.execute(this::flush));
    this.responses.setOnCancelHandler(() -> executor.execute(() -> finish("cancelled")));
    hub.register(this);
  }

  @Override
  public void onNext(DiscoveryRequest request) {
    executor.execute(() -> {
      if (!done) {
        ResourceType t = serviceType != null ? serviceType
            : ResourceType.fromTypeUrl(request.getTypeUrl()).orElse(null);
        if (t != null) {
          hub.metrics().request(t);
          if (t.availableInSotw() && requestedTypes.add(t)) {
            hub.metrics().typeRequested(StreamInfo.SOTW, t);
          }
        }
        apply(stream.onRequest(request, hub.current()));
        announce();
      }
    });
  }

  @Override
  public void onConfig(ServedConfig config, Map<String, Map<ResourceType, Set<String>>> changes) {
    long at = System.nanoTime();
    executor.execute(() -> {
      if (!done) {
        configChangedAt = at;
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
      if (o instanceof Outcome.Send s) {
        DiscoveryResponse r = (DiscoveryResponse) s.response();
        hub.metrics().response(s.type(), r.getSerializedSize());
        if (configChangedAt != 0 && !Long.valueOf(configChangedAt).equals(pushedChange.get(s.type()))) {
          pushedChange.put(s.type(), configChangedAt);
          pushStartedAt.put(s.type(), configChangedAt);
        }
        backlog.add(r);
        flush();
      } else if (o instanceof Outcome.Nacked n) {
        hub.metrics().nack(n.nack().type());
        pushStartedAt.remove(n.nack().type());
        LOG.log(System.Logger.Level.WARNING, LogLine.of("nack")
            .kv("stream", info.id()).kv("node", n.nack().nodeId()).kv("group", stream.group())
            .kv("peer", info.peer()).kv("type", n.nack().type().abbreviation())
            .kv("rejected_version", n.nack().rejectedVersion())
            .kv("kept_version", n.nack().keptVersion()).kv("code", n.nack().code())
            .kv("message", n.nack().message()).toString());
      } else if (o instanceof Outcome.Ack a) {
        hub.metrics().ack(a.type());
        Long started = pushStartedAt.remove(a.type());
        if (started != null) {
          hub.metrics().pushLatency(a.type(), System.nanoTime() - started);
        }
        LOG.log(System.Logger.Level.DEBUG, "ACK {0} {1} version={2}", description,
            a.type().abbreviation(), a.version());
      } else if (o instanceof Outcome.Ignored i) {
        LOG.log(System.Logger.Level.DEBUG, "{0} {1}: ignored: {2}", description,
            i.type().abbreviation(), i.reason());
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
      requestedTypes.forEach(t -> hub.metrics().typeReleased(StreamInfo.SOTW, t));
      announce();
      LOG.log(System.Logger.Level.INFO, LogLine.of("stream_close").kv("stream", info.id())
          .kv("node", stream.node() == null ? null : stream.node().getId()).kv("peer", info.peer())
          .kv("method", info.method()).kv("duration_ms",
              java.time.Duration.between(info.connectedSince(), java.time.Instant.now()).toMillis())
          .kv("reason", reason).toString());
    }
  }

  /** Logs the stream's opening once its node is known (its first request), or at its close. */
  private void announce() {
    if (!announced) {
      announced = true;
      LOG.log(System.Logger.Level.INFO, LogLine.of("stream_open").kv("stream", info.id())
          .kv("node", stream.node() == null ? null : stream.node().getId())
          .kv("cluster", stream.node() == null ? null : stream.node().getCluster())
          .kv("group", stream.group()).kv("peer", info.peer()).kv("variant", info.variant())
          .kv("method", info.method()).toString());
    }
  }

  @Override
  public StreamInfo info() {
    return info;
  }

  @Override
  public java.util.concurrent.CompletableFuture<ClientStatus> status() {
    java.util.concurrent.CompletableFuture<ClientStatus> f =
        new java.util.concurrent.CompletableFuture<>();
    try {
      executor.execute(() -> f.complete(
          new ClientStatus(info, stream.node(), stream.group(), stream.status())));
    } catch (java.util.concurrent.RejectedExecutionException e) {
      f.completeExceptionally(e);
    }
    return f;
  }

  @Override
  public void drain() {
    executor.execute(() -> {
      if (!done) {
        flush(); // what the transport can take; gRPC writes it before the trailers
        finish("server shutting down");
        responses.onError(Status.UNAVAILABLE.withDescription("server shutting down")
            .asRuntimeException());
      }
    });
  }

  SotwStream stream() {
    return stream;
  }
}
