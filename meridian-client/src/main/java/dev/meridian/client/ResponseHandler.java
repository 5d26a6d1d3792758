package dev.meridian.client;

import io.grpc.Status;
import java.util.List;
import java.util.Set;

/**
 * What a stream tells the client: its life and the responses it received (the model is grpc-java's
 * XdsResponseHandler). One method per protocol variant, since a SotW response and a Delta response
 * prove different things about absence. Called on the client's context only.
 */
interface ResponseHandler {
  /** The stream can carry requests: the does-not-exist timers may start. */
  void handleStreamReady(Bootstrap.ServerInfo server, StreamScope scope);

  /**
   * The stream ended; it reconnects on its own.
   *
   * @param responded whether it had received a response: if not, the server is unreachable (gRFC
   *     A57), which may make the client fall back to another server (gRFC A71)
   */
  void handleStreamClosed(Bootstrap.ServerInfo server, StreamScope scope, Status status,
      boolean responded);

  /**
   * Applies a State of the World response.
   *
   * @param namedInEveryRequest the names every request for the type on this stream carried, so
   *     the response was asked for them whichever request it answers
   * @param processed run on the context once the response and every watcher callback it caused
   *     have been processed (read-side flow control); it runs even if this method throws
   * @return the problems found (empty: ACK)
   */
  List<String> handleSotwResponse(Bootstrap.ServerInfo server, DecodedResponse response,
      String versionInfo, Set<String> namedInEveryRequest, Runnable processed);

  /**
   * Applies an Incremental (Delta) response.
   *
   * @param processed as for {@link #handleSotwResponse}
   * @return the problems found (empty: ACK)
   */
  List<String> handleDeltaResponse(Bootstrap.ServerInfo server, DecodedResponse response,
      String systemVersionInfo, Runnable processed);
}
