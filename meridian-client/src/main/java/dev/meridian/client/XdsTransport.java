package dev.meridian.client;

import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Status;

/**
 * The client's only I/O seam: bidirectional discovery streams. gRPC is one implementation
 * ({@link GrpcXdsTransport}); tests script the peer with a fake. Listener callbacks may arrive on
 * any thread; the client hops onto its own context before touching state.
 *
 * <p>Read-side flow control: a call delivers a response only when one was asked for with
 * {@link Call#request}, the way gRPC's manual flow control does. The client asks for one when it
 * opens the call and one more each time it has processed a response, watchers included; until
 * then the next response waits in the transport (gRPC buffers it and the server's flow-control
 * window fills), or is not fetched yet (REST polls, files).
 */
public interface XdsTransport extends AutoCloseable {
  /** Opens {@code StreamAggregatedResources} or the scope's type's Stream* method. */
  Call<DiscoveryRequest> openSotw(StreamScope scope, Listener<DiscoveryResponse> listener);

  /** Opens {@code DeltaAggregatedResources} or the scope's type's Delta* method. */
  Call<DeltaDiscoveryRequest> openDelta(StreamScope scope,
      Listener<DeltaDiscoveryResponse> listener);

  @Override
  void close();

  /**
   * Runs {@code task} (on any thread) each time the connection to the server becomes ready after
   * it was not, e.g. when a server that was down is back: streams waiting out their backoff to it
   * reconnect at once, and the client may go back to it (gRFC A71). By default never: the streams'
   * backoff alone decides when they try again.
   */
  default void whenConnected(Runnable task) {}

  /**
   * A stream this transport cannot carry: closed with UNIMPLEMENTED and {@code why}, through
   * {@code executor} (never inside the open call), and a call that ignores what is sent.
   */
  static <Q, R> Call<Q> unsupported(java.util.concurrent.Executor executor, Listener<R> listener,
      String why) {
    executor.execute(() -> listener.onClosed(Status.UNIMPLEMENTED.withDescription(why)));
    return new Call<>() {
      @Override public void send(Q request) {}
      @Override public void request(int count) {}
      @Override public void cancel(String reason) {}
    };
  }

  /** One open stream. */
  interface Call<Q> {
    void send(Q request);

    /** Allows {@code count} more {@link Listener#onMessage} calls (gRPC's ClientCall.request). */
    void request(int count);

    /** Ends the stream from our side; no further listener callbacks are expected to matter. */
    void cancel(String reason);
  }

  /** Events of one stream. */
  interface Listener<R> {
    /** The stream can carry messages (gRPC's onReady): the does-not-exist timers may start. */
    void onReady();

    /** A response; never more of them than were requested. */
    void onMessage(R response);

    void onClosed(Status status);
  }
}
