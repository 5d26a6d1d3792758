package dev.meridian.bench;

import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ClientResponseObserver;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A client that stops reading (issue 25): one SotW ADS stream on its own connection, whose channel
 * has a small HTTP/2 window. It asks for CDS, ACKs the CDS response and asks for EDS for every
 * cluster, ACKs the first EDS response, and from then on requests no message: with automatic
 * requests disabled ({@code disableAutoRequestWithInitial(0)}, then one {@code request(1)}
 * per response it waits for), grpc-java no longer deframes what arrives, returns no window to the
 * server, and the server's stream stops being ready once a window's worth is in flight.
 * {@link #startDraining} reads again at the end to count what the server had sent meanwhile.
 */
final class NonReadingClient {
  private final int id;
  private final BenchClient.Shared shared;
  private final ManagedChannel channel;
  private final CountDownLatch synced = new CountDownLatch(1);
  private ClientCallStreamObserver<DiscoveryRequest> out;
  private volatile Throwable error;
  private boolean edsRequested;
  /** Set by {@link #drain}: responses then arriving are counted, not answered. */
  private volatile boolean draining;
  private int pending;
  private long pendingBytes;

  NonReadingClient(int id, BenchClient.Shared shared, ManagedChannel channel) {
    this.id = id;
    this.shared = shared;
    this.channel = channel;
  }

  void start() {
    ClientCalls.asyncBidiStreamingCall(channel.newCall(shared.sotwMethod, CallOptions.DEFAULT),
        new ClientResponseObserver<DiscoveryRequest, LightResponse>() {
          @Override
          public void beforeStart(ClientCallStreamObserver<DiscoveryRequest> requestStream) {
            out = requestStream;
            requestStream.disableAutoRequestWithInitial(0);
          }

          @Override
          public void onNext(LightResponse r) {
            onResponse(r);
          }

          @Override
          public void onError(Throwable t) {
            error = t;
          }

          @Override
          public void onCompleted() {}
        });
    synchronized (this) {
      out.onNext(DiscoveryRequest.newBuilder().setNode(Node.newBuilder().setId("non-reading-" + id)
          .setCluster("bench")).setTypeUrl(BenchClient.CDS).build());
      out.request(1);
    }
  }

  private synchronized void onResponse(LightResponse r) {
    if (draining) {
      pending++;
      pendingBytes += r.size;
      return;
    }
    boolean isCds = r.typeUrl.equals(BenchClient.CDS);
    if (isCds) {
      out.onNext(DiscoveryRequest.newBuilder().setTypeUrl(BenchClient.CDS)
          .setVersionInfo(r.version).setResponseNonce(r.nonce).build());
      if (!edsRequested) {
        edsRequested = true;
        out.onNext(shared.sotwEds);
      }
      out.request(1); // still waiting for the first EDS response
    } else {
      out.onNext(shared.sotwEds.toBuilder().setVersionInfo(r.version)
          .setResponseNonce(r.nonce).build());
      synced.countDown(); // and no request(n) any more: the client stops reading
    }
  }

  /** Waits (at most {@code millis}) until the client ACKed its first EDS response. */
  boolean awaitSynced(long millis) throws InterruptedException {
    return synced.await(millis, TimeUnit.MILLISECONDS);
  }

  /**
   * Reads again, without answering: what arrives from now on is what the server held for this
   * client ({@link #pending}).
   */
  void startDraining() {
    draining = true;
    synchronized (this) {
      out.request(Integer.MAX_VALUE);
    }
  }

  /** Responses and their bytes received since {@link #startDraining}. */
  synchronized long[] pending() {
    return new long[] {pending, pendingBytes};
  }

  Throwable error() {
    return error;
  }

  void close() {
    channel.shutdownNow();
  }

  void awaitClosed(long millis) throws InterruptedException {
    channel.awaitTermination(millis, TimeUnit.MILLISECONDS);
  }
}
