package dev.meridian.internal.server;

import java.util.concurrent.CompletableFuture;

/**
 * A connected xDS stream as operators see it. Implemented by each transport handler (SotW now,
 * Delta later) and registered in the {@link StreamRegistry} for its lifetime.
 */
public interface ConnectedStream {
  StreamInfo info();

  /**
   * The stream's current status, computed on its own serial executor (never from the caller's
   * thread, which must not touch protocol state).
   */
  CompletableFuture<ClientStatus> status();

  /**
   * Graceful shutdown: hand the transport what is already queued, then end the stream with
   * UNAVAILABLE so that the client reconnects, to another replica if there is one.
   */
  void drain();
}
