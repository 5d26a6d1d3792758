package dev.meridian.server;

import com.google.protobuf.Message;

/**
 * Observes xDS streams, as java-control-plane's {@code DiscoveryServerCallbacks}. Every method
 * has an empty default: implement what you need.
 *
 * <p>Callbacks run off the push path, on one thread of their own ({@code meridian-callbacks}), in
 * the order the events happened: a slow callback delays later callbacks, never a push. Events wait
 * in a bounded queue ({@link Meridian.Builder#callbacks(DiscoveryCallbacks, int)}); when it is
 * full, new events are dropped and counted ({@link Meridian#callbackEventsDropped()}), so memory
 * stays bounded whatever a callback does. An exception thrown by a callback is logged and the next
 * event is delivered.
 *
 * <p>A stream reports {@link #onStreamOpened} at its first request (when its node is known),
 * then its requests, responses, ACKs and NACKs, and {@link #onStreamClosed} when it ends. A stream
 * that ends before its first request reports nothing. REST-JSON polls report nothing.
 */
public interface DiscoveryCallbacks {
  /** A stream's first request arrived. */
  default void onStreamOpened(StreamView stream) {}

  /**
   * A request arrived: a {@code DiscoveryRequest} (State of the World) or a
   * {@code DeltaDiscoveryRequest} (Incremental), as the client sent it.
   */
  default void onRequest(StreamView stream, Message request) {}

  /**
   * A response was handed to the transport: a {@code DiscoveryResponse} or a
   * {@code DeltaDiscoveryResponse}.
   */
  default void onResponse(StreamView stream, String typeUrl, Message response) {}

  /** The client accepted {@code version} of {@code typeUrl}. */
  default void onAck(StreamView stream, String typeUrl, String version) {}

  /**
   * The client rejected {@code rejectedVersion} of {@code typeUrl}; {@code error} is its
   * {@code error_detail} (the message bounded to 4,096 characters).
   */
  default void onNack(StreamView stream, String typeUrl, String rejectedVersion,
      com.google.rpc.Status error) {}

  /** The stream ended; {@code reason} says how ({@code client closed}, {@code cancelled}, ...). */
  default void onStreamClosed(StreamView stream, String reason) {}
}
