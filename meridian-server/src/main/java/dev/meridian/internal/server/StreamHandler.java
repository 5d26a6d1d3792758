package dev.meridian.internal.server;

import com.google.protobuf.Message;
import dev.meridian.internal.protocol.Outcome;
import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.internal.protocol.XdsStream;
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
  /**
   * The generation of the newest config this stream has worked with, from a push or its own read.
   * A number, not the config: a stream that no change concerns must not pin an old one.
   */
  private long generation;
  /** Generations (from, to] whose changes a catch-up applied at once (see publish). */
  private long caughtUpFrom;
  private long caughtUpTo;
  /** The interest last published to the hub's index. */
  private XdsStream.Interest published = XdsStream.Interest.NONE;
  /** The embedding application's callbacks; {@link StreamEvents#NONE} without them. */
  private final StreamEvents events;
  /** Whether {@link StreamEvents#opened} was reported (at the first request with a node). */
  private boolean opened;
  /** The requests this stream may still send ({@code --max-request-rate}); null: no limit. */
  private final RequestBudget budget;
  private final java.util.function.ToIntFunction<R> sizes;

  StreamHandler(DiscoveryHub hub, XdsStream<Q, ?> stream, StreamObserver<R> responses,
      SerialExecutor executor, String description, Clock clock) {
    this(hub, stream, responses, executor, description, clock, null,
        r -> ((com.google.protobuf.MessageLite) r).getSerializedSize());
  }

  /**
   * {@code sizes}: a response's encoded size, for the bytes metric; the shared-body marshaller
   * knows it without a walk over a whole type's 10,000 resources per client.
   */
  StreamHandler(DiscoveryHub hub, XdsStream<Q, ?> stream, StreamObserver<R> responses,
      SerialExecutor executor, String description, Clock clock, RequestBudget budget,
      java.util.function.ToIntFunction<R> sizes) {
    this.sizes = sizes;
    this.budget = budget;
    this.hub = hub;
    this.stream = stream;
    this.responses = (ServerCallStreamObserver<R>) responses;
    this.executor = executor;
    this.telemetry = new StreamTelemetry(hub,
        stream.variant().equals("Delta") ? StreamInfo.DELTA : StreamInfo.SOTW,
        stream.serviceType(), description, clock);
    this.events = hub.events();
    hub.registry().register(this);
    this.responses.setOnReadyHandler(() -> executor.execute(this::flush));
    this.responses.setOnCancelHandler(() -> executor.execute(() -> finish("cancelled")));
    hub.registerIndexed(this);
  }

  @Override
  public void onNext(Q request) {
    // Both read on the thread that parsed the request.
    SharedNamesMarshaller.Refusal refused = SharedNamesMarshaller.refusal(request);
    if (refused != null) {
      executor.execute(() -> refuse(refused));
      return;
    }
    SharedNamesMarshaller.Held held = SharedNamesMarshaller.held();
    executor.execute(() -> {
      try {
        handle(request);
      } finally {
        if (held != null) {
          held.release(); // handled (or the stream is done): the server no longer holds it
        }
      }
    });
  }

  private void handle(Q request) {
    if (!done) {
      if (budget != null && !budget.take(System.nanoTime())) {
        // Closed, not slowed: a client this far over its rate is broken or hostile, and a
        // queue of its requests would cost memory the other streams need.
        String why = "more than " + budget.limit()
            + " requests a second on average (the server's request rate limit)";
        hub.metrics().boundRefused("max_request_rate");
        finish("closed by server: RESOURCE_EXHAUSTED: " + why);
        responses.onError(Status.RESOURCE_EXHAUSTED.withDescription(why).asRuntimeException());
        return;
      }
      telemetry.request(stream.requestType(request));
      DiscoveryHub.Served now = hub.served();
      generation = Math.max(generation, now.generation());
      List<Outcome> outcomes = stream.onRequest(request, now.config());
      // Reported before what the request caused: opened, the request, then its responses.
      telemetry.announce(stream.node(), stream.group());
      if (!opened && stream.node() != null) {
        opened = true;
        events.opened(telemetry.info, stream.node(), stream.group());
      }
      if (opened) {
        events.request(telemetry.info, stream.node(), stream.group(), request);
      }
      apply(outcomes);
    }
  }

  /** Ends the stream for a request its marshaller refused: a bound, or not protobuf. */
  private void refuse(SharedNamesMarshaller.Refusal refused) {
    if (!done) {
      Status why = refused.status();
      if (refused.bound() != null) {
        hub.metrics().boundRefused(refused.bound());
      }
      finish("closed by server: " + why.getCode() + ": " + why.getDescription());
      responses.onError(why.asRuntimeException());
    }
  }

  @Override
  public void onConfig(ServedConfig config, Map<String, Map<ResourceType, Set<String>>> changes,
      long generation) {
    executor.execute(configTask(config, changes, generation));
  }

  @Override
  public void onConfigHere(ServedConfig config,
      Map<String, Map<ResourceType, Set<String>>> changes, long generation) {
    executor.runOrExecute(configTask(config, changes, generation));
  }

  private Runnable configTask(ServedConfig config,
      Map<String, Map<ResourceType, Set<String>>> changes, long pushed) {
    long at = System.nanoTime();
    return () -> {
      if (!done) {
        telemetry.configChanged(at);
        if (pushed > generation) {
          generation = pushed;
          apply(stream.onConfig(config, changes));
        } else if (pushed <= caughtUpFrom || pushed > caughtUpTo) {
          // This stream read a newer config meanwhile: the change, but against the newest config
          // (an older one would take back what the stream has already served).
          DiscoveryHub.Served now = hub.served();
          generation = now.generation();
          apply(stream.onConfig(now.config(), changes));
        } // else a catch-up (publish) applied this change already
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
    publish();
  }

  /**
   * Publishes what concerns this stream to the hub's index (DESIGN "Fan-out"), when it changed.
   * The hub sets a new config, then reads the index to find whom it concerns; this publishes, then
   * reads the config. So either the hub's read saw the new interest (the push comes), or this read
   * sees the new config: never neither. In the second case the stream catches up here, on the diff
   * from the config it last worked with, and skips the pushes that diff covered.
   */
  private void publish() {
    while (!done) {
      XdsStream.Interest next = stream.interest();
      if (next == published) {
        return;
      }
      published = next;
      hub.publish(this, next);
      DiscoveryHub.Served now = hub.served();
      if (now.generation() <= generation) {
        return;
      }
      caughtUpFrom = generation;
      caughtUpTo = now.generation();
      generation = now.generation();
      carryOut(stream.catchUp(now.config()));
      wantsTick = stream.wantsTick();
    }
  }

  @SuppressWarnings("unchecked")
  private void carryOut(List<Outcome> outcomes) {
    for (Outcome o : outcomes) {
      if (done) {
        return; // ended meanwhile (a drain that completed on this very send)
      }
      if (o instanceof Outcome.Send s) {
        R r = (R) s.response();
        telemetry.sent(s.type(), sizes.applyAsInt(r));
        if (budget != null) {
          budget.responded();
        }
        if (opened) {
          events.sent(telemetry.info, stream.node(), stream.group(), s.type(), r);
        }
        if (backlog.isEmpty() && !draining && responses.isReady()) {
          responses.onNext(r); // straight through: no store into the long-lived backlog
        } else {
          backlog.add(r);
          flush();
        }
      } else if (o instanceof Outcome.Nacked n) {
        telemetry.nacked(n.nack(), stream.group());
        if (opened) {
          events.nacked(telemetry.info, stream.node(), stream.group(), n.nack());
        }
      } else if (o instanceof Outcome.Ack a) {
        telemetry.acked(a.type(), a.version());
        if (opened) {
          events.acked(telemetry.info, stream.node(), stream.group(), a.type(), a.version());
        }
      } else if (o instanceof Outcome.Ignored i) {
        telemetry.ignored(i.type(), i.reason());
      } else if (o instanceof Outcome.Withheld w) {
        telemetry.withheld(stream.node(), stream.group(), w.type(), w.name(), w.reason());
      } else if (o instanceof Outcome.Close c) {
        if (c.code() == Outcome.CloseCode.PERMISSION_DENIED) {
          telemetry.denied(stream.node(), c.message());
        } else if (c.code() == Outcome.CloseCode.RESOURCE_EXHAUSTED) {
          hub.metrics().boundRefused("max_resource_names");
        }
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
      published = XdsStream.Interest.NONE;
      hub.unregister(this);
      hub.registry().unregister(this);
      telemetry.closed(stream.node(), stream.group(), reason);
      if (opened) {
        events.closed(telemetry.info, stream.node(), stream.group(), reason);
      }
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
