package dev.meridian.server;

import com.google.protobuf.Message;
import dev.meridian.protocol.Outcome;
import dev.meridian.protocol.ResourceType;
import dev.meridian.protocol.ServedConfig;
import dev.meridian.protocol.XdsStream;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Adapts one gRPC xDS stream (SotW or Delta, ADS or per-type) to the protocol core. Everything runs
 * on the stream's serial executor; this class only carries out {@link Outcome}s.
 *
 * @param <Q> request message
 * @param <R> response message
 */
final class StreamHandler<Q extends Message, R extends Message>
    implements StreamObserver<Q>, DiscoveryHub.Listener {
  private static final System.Logger LOG = System.getLogger("dev.meridian.server.xds");

  private final DiscoveryHub hub;
  private final XdsStream<Q, ?> stream;
  private final ServerCallStreamObserver<R> responses;
  private final SerialExecutor executor;
  private final String description;
  /** Responses waiting for the transport to be ready; at most one per type (flow control). */
  private final ArrayDeque<R> backlog = new ArrayDeque<>();
  private boolean done;
  private volatile boolean wantsTick;

  StreamHandler(DiscoveryHub hub, XdsStream<Q, ?> stream, StreamObserver<R> responses,
      SerialExecutor executor, String description) {
    this.hub = hub;
    this.stream = stream;
    this.responses = (ServerCallStreamObserver<R>) responses;
    this.executor = executor;
    this.description = description;
    this.responses.setOnReadyHandler(() -> executor.execute(this::flush));
    this.responses.setOnCancelHandler(() -> executor.execute(this::finish));
    hub.register(this);
  }

  @Override
  public void onNext(Q request) {
    executor.execute(() -> {
      if (!done) {
        apply(stream.onRequest(request, hub.current()));
      }
    });
  }

  @Override
  public void onConfig(ServedConfig config, Map<String, Map<ResourceType, Set<String>>> changes) {
    executor.execute(() -> {
      if (!done) {
        apply(stream.onConfig(config, changes));
      }
    });
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
  public void onError(Throwable t) {
    executor.execute(this::finish);
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

  @Override
  public boolean wantsTick() {
    return wantsTick;
  }

  private void apply(List<Outcome> outcomes) {
    carryOut(outcomes);
    wantsTick = stream.wantsTick();
  }

  @SuppressWarnings("unchecked")
  private void carryOut(List<Outcome> outcomes) {
    for (Outcome o : outcomes) {
      if (o instanceof Outcome.Send s) {
        backlog.add((R) s.response());
        flush();
      } else if (o instanceof Outcome.Nacked n) {
        LOG.log(System.Logger.Level.WARNING,
            "NACK node={0} type={1} rejected_version={2} kept_version={3} message={4}",
            n.nack().nodeId(), n.nack().type().abbreviation(), n.nack().rejectedVersion(),
            n.nack().keptVersion(), n.nack().message());
      } else if (o instanceof Outcome.Ack a) {
        LOG.log(System.Logger.Level.DEBUG, "ACK {0} {1} version={2}", description,
            a.type().abbreviation(), a.version());
      } else if (o instanceof Outcome.Ignored i) {
        LOG.log(System.Logger.Level.DEBUG, "{0} {1}: ignored: {2}", description,
            i.type().abbreviation(), i.reason());
      } else if (o instanceof Outcome.Close c) {
        LOG.log(System.Logger.Level.INFO, "closing {0}: {1}", description, c.message());
        finish();
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
    if (!done) {
      done = true;
      backlog.clear();
      hub.unregister(this);
    }
  }

  XdsStream<Q, ?> stream() {
    return stream;
  }
}
