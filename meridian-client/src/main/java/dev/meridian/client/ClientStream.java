package dev.meridian.client;

import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.grpc.Status;
import java.time.Duration;
import java.util.function.DoubleSupplier;

/**
 * One discovery stream (ADS: all types; otherwise one type) and its reconnect loop. Subclasses
 * speak SotW or Delta ({@code Q}: their request message); everything here runs on the client's
 * context. The model is grpc-java's ControlPlaneClient: it knows the client only through
 * {@link ResourceStore} and {@link ResponseHandler}.
 */
abstract class ClientStream<Q> {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger("dev.meridian.client");

  /** What a stream is given by its owner. */
  record Deps(XdsTransport transport, Node node, ResourceStore store, ResponseHandler handler,
      SerializingContext ctx, Scheduler scheduler, DoubleSupplier random) {}

  final Bootstrap.ServerInfo server;
  final StreamScope scope;
  final XdsTransport transport;
  final Node node;
  final ResourceStore store;
  final ResponseHandler handler;
  final SerializingContext ctx;
  private final Scheduler scheduler;
  private final Backoff backoff;
  /** The open call; null between streams. */
  XdsTransport.Call<Q> call;
  boolean ready;
  boolean responseReceived;
  private boolean stopped;
  private int generation;
  private Scheduler.Cancellable retry;
  /** The last {@code control_plane.identifier} a response carried; "" before any. */
  private String controlPlane = "";

  ClientStream(Bootstrap.ServerInfo server, StreamScope scope, Deps deps) {
    this.server = server;
    this.scope = scope;
    this.transport = deps.transport();
    this.node = deps.node();
    this.store = deps.store();
    this.handler = deps.handler();
    this.ctx = deps.ctx();
    this.scheduler = deps.scheduler();
    this.backoff = Backoff.standard(deps.random());
  }

  final void start() {
    ctx.throwIfNotInThisContext();
    if (stopped) {
      return;
    }
    generation++;
    ready = false;
    responseReceived = false;
    forgetStream();
    call = open(generation);
    // Read-side flow control: one response at a time; the next is asked for once this one has
    // been processed, watchers included (see whenProcessed).
    call.request(1);
    // Spec "Eventual consistency considerations": subscribe in make-before-break order.
    for (ResourceType t : store.subscribedTypes(server, scope)) {
      sendInitial(t);
    }
  }

  /** Opens the call; events of an older generation are ignored. */
  abstract XdsTransport.Call<Q> open(int generation);

  /** Forgets what the previous call was told: a new stream starts from nothing. */
  abstract void forgetStream();

  /** First request for a type on a fresh stream: versions we hold, empty nonce. */
  abstract void sendInitial(ResourceType type);

  /** The subscription for a type changed: tell the server. */
  abstract void subscriptionChanged(ResourceType type);

  final boolean current(int gen) {
    return gen == generation && !stopped;
  }

  final void handleReady(int gen) {
    ctx.throwIfNotInThisContext();
    if (!current(gen) || ready) {
      return;
    }
    ready = true;
    handler.handleStreamReady(server, scope);
  }

  /**
   * Reconnect: at once if the stream had received a response (the server was healthy), otherwise
   * after an exponential backoff with jitter (gRPC's connection-backoff.md).
   */
  final void handleClosed(int gen, Status status) {
    ctx.throwIfNotInThisContext();
    if (!current(gen)) {
      return;
    }
    ready = false;
    call = null; // nothing is sent until the next stream is open
    forgetStream();
    LOG.debug("xDS stream closed: {}", status);
    handler.handleStreamClosed(server, scope, status, responseReceived);
    if (stopped) {
      return; // the client left this server (gRFC A71 fallback) while hearing of the close
    }
    if (responseReceived) {
      backoff.reset();
      start();
      return;
    }
    Duration delay = backoff.next();
    LOG.debug("reconnecting in {}", delay);
    Scheduler.Cancellable[] self = new Scheduler.Cancellable[1];
    self[0] = scheduler.schedule(() -> ctx.execute(() -> {
      if (retry == self[0]) { // not cancelled, nor overtaken by reconnectNow
        retry = null;
        start();
      }
    }), delay);
    retry = self[0];
  }

  /**
   * Reconnects now if the stream is waiting out its backoff: its server has just proved reachable
   * on another stream (gRFC A71, going back to a server of higher priority in per-type mode).
   */
  final void reconnectNow() {
    ctx.throwIfNotInThisContext();
    if (retry == null || stopped) {
      return;
    }
    retry.cancel();
    retry = null;
    backoff.reset();
    start();
  }

  /**
   * Logs who serves this stream when a response names a control plane other than the last one
   * ({@code control_plane.identifier}: Meridian replicas name themselves), so the log says which
   * replica served the config, also across fallbacks (gRFC A71).
   */
  final void noteControlPlane(String identifier) {
    if (!identifier.isEmpty() && !identifier.equals(controlPlane)) {
      controlPlane = identifier;
      LOG.info("xDS {} stream to {}: served by control plane {}",
          scope, server.serverUri(), identifier);
    }
  }

  final void shutdown() {
    ctx.throwIfNotInThisContext();
    stopped = true;
    if (retry != null) {
      retry.cancel();
      retry = null;
    }
    if (call != null) {
      call.cancel("xDS client closed");
      call = null;
    }
  }

  /**
   * For the response being handled now: what to run once the client has processed it and every
   * watcher callback it caused has run. It asks the same call for the next response, so a slow
   * watcher holds the server back instead of piling responses up in the client (grpc-java's
   * ProcessingTracker and startRecvMessage).
   */
  final Runnable whenProcessed() {
    int gen = generation;
    return () -> {
      ctx.throwIfNotInThisContext();
      if (current(gen) && call != null) {
        call.request(1);
      }
    };
  }

  /**
   * A response that failed to apply with an unexpected exception (a bug of ours, or a component we
   * were given that failed): NACKed with the error, as grpc-java NACKs a resource it cannot process,
   * so that the server hears of it and the stream reads on instead of stalling.
   */
  final String failedToApply(ResourceType type, RuntimeException e) {
    LOG.warn("failed to apply a " + type.abbreviation() + " response", e);
    return dev.meridian.internal.protocol.Nack.bound("failed to apply the response: " + e);
  }

  /** Transport events of stream generation {@code gen}, hopped onto the client's context. */
  final <R> XdsTransport.Listener<R> listenerFor(int gen, java.util.function.Consumer<R> onResponse) {
    return new XdsTransport.Listener<>() {
      @Override
      public void onReady() {
        ctx.execute(() -> handleReady(gen));
      }

      @Override
      public void onMessage(R response) {
        ctx.execute(() -> {
          if (current(gen)) {
            onResponse.accept(response);
          }
        });
      }

      @Override
      public void onClosed(io.grpc.Status status) {
        ctx.execute(() -> handleClosed(gen, status));
      }
    };
  }
}
